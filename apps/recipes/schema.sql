-- Paprika: recipes with their ingredients and directions, categories, a grocery list and a
-- meal plan. Times are ms since the epoch (virtual clock); meal-plan days are 'YYYY-MM-DD'.
CREATE TABLE categories (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  position INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE recipes (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL CHECK (trim(title) <> ''),
  cuisine TEXT NOT NULL DEFAULT '',
  category_id INTEGER REFERENCES categories(id),
  prep_min INTEGER NOT NULL DEFAULT 0,
  cook_min INTEGER NOT NULL DEFAULT 0,
  servings INTEGER NOT NULL DEFAULT 4 CHECK (servings > 0),
  rating INTEGER NOT NULL DEFAULT 0 CHECK (rating BETWEEN 0 AND 5),
  favorite INTEGER NOT NULL DEFAULT 0,
  difficulty TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  photo TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL
);

-- qty NULL: no amount ("salt to taste"); shown scaled by servings / recipes.servings.
CREATE TABLE ingredients (
  id INTEGER PRIMARY KEY,
  recipe_id INTEGER NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  qty REAL,
  unit TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  aisle TEXT NOT NULL DEFAULT 'Other'
);

CREATE TABLE steps (
  id INTEGER PRIMARY KEY,
  recipe_id INTEGER NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  text TEXT NOT NULL
);

CREATE TABLE groceries (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL CHECK (trim(name) <> ''),
  qty REAL,
  unit TEXT NOT NULL DEFAULT '',
  aisle TEXT NOT NULL DEFAULT 'Other',
  recipe_id INTEGER REFERENCES recipes(id) ON DELETE SET NULL,
  checked INTEGER NOT NULL DEFAULT 0,
  added_at INTEGER NOT NULL
);

CREATE TABLE meals (
  id INTEGER PRIMARY KEY,
  day TEXT NOT NULL,                       -- 'YYYY-MM-DD'
  meal TEXT NOT NULL CHECK (meal IN ('Breakfast', 'Lunch', 'Dinner', 'Snack')),
  recipe_id INTEGER NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL
);
