CREATE TABLE lists (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  position INTEGER NOT NULL DEFAULT 0,
  sort TEXT NOT NULL DEFAULT 'my_order'      -- my_order | date | starred | title
);
CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  list_id INTEGER NOT NULL REFERENCES lists(id),
  parent_id INTEGER REFERENCES tasks(id),    -- a subtask's parent
  title TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  due_date TEXT,                             -- YYYY-MM-DD
  due_time TEXT,                             -- HH:MM (24 h), only with a date
  priority INTEGER NOT NULL DEFAULT 0,       -- 0 none, 1 low, 2 medium, 3 high
  starred INTEGER NOT NULL DEFAULT 0,
  completed INTEGER NOT NULL DEFAULT 0,
  completed_at INTEGER,
  deleted INTEGER NOT NULL DEFAULT 0,        -- 0 live; else the id of the deleted task it went with (undo)
  position INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL DEFAULT 0
);
