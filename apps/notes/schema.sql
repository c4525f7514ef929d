-- Markor keeps notes as files in a notebook folder; here, folders and notes in one database.
CREATE TABLE folders (
  id INTEGER PRIMARY KEY,
  parent_id INTEGER REFERENCES folders(id),   -- NULL: the notebook's top level
  name TEXT NOT NULL CHECK (name <> '' AND instr(name, '/') = 0)
);

CREATE TABLE notes (
  id INTEGER PRIMARY KEY,
  folder_id INTEGER REFERENCES folders(id),   -- NULL: the top level
  name TEXT NOT NULL CHECK (name <> '' AND instr(name, '/') = 0),  -- with its extension: .md or .txt
  body TEXT NOT NULL DEFAULT '',
  modified_at INTEGER NOT NULL,
  favorite INTEGER NOT NULL DEFAULT 0
);
