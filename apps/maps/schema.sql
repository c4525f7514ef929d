-- Maps: places, routes from your location, saved lists, recent searches, Home/Work labels.
CREATE TABLE places (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  category TEXT NOT NULL,
  street TEXT NOT NULL,
  town TEXT NOT NULL,
  phone TEXT NOT NULL DEFAULT '',
  hours TEXT NOT NULL DEFAULT '',
  days_mask INTEGER NOT NULL,      -- bit 0 = Sunday .. bit 6 = Saturday
  open_min INTEGER NOT NULL,       -- minutes after midnight
  close_min INTEGER NOT NULL,      -- may pass 1440 (open past midnight)
  rating REAL NOT NULL,
  reviews INTEGER NOT NULL,
  price TEXT NOT NULL DEFAULT '',
  keywords TEXT NOT NULL DEFAULT '',
  km REAL NOT NULL,                -- road distance from your location
  website TEXT NOT NULL DEFAULT ''
);
CREATE TABLE routes (
  place_id INTEGER NOT NULL REFERENCES places(id),
  mode TEXT NOT NULL,              -- drive, transit, walk, bike
  km REAL NOT NULL,
  minutes INTEGER NOT NULL,
  via TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (place_id, mode)
);
CREATE TABLE route_steps (
  place_id INTEGER NOT NULL,
  mode TEXT NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL
);
CREATE TABLE lists (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT 'custom',   -- favorites, want_to_go, custom
  created_at INTEGER NOT NULL
);
CREATE TABLE saved (
  id INTEGER PRIMARY KEY,
  list_id INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
  place_id INTEGER NOT NULL REFERENCES places(id),
  note TEXT NOT NULL DEFAULT '',
  added_at INTEGER NOT NULL,
  UNIQUE (list_id, place_id)
);
CREATE TABLE recents (
  id INTEGER PRIMARY KEY,
  query TEXT NOT NULL,
  place_id INTEGER,
  searched_at INTEGER NOT NULL
);
CREATE TABLE labels (
  label TEXT PRIMARY KEY,          -- home, work
  address TEXT NOT NULL DEFAULT ''
);
-- Navigation sessions started from Directions.
CREATE TABLE trips (
  id INTEGER PRIMARY KEY,
  place_id INTEGER NOT NULL,
  mode TEXT NOT NULL,
  started_at INTEGER NOT NULL
);
