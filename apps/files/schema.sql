-- The Files app: the phone's shared storage. Other apps that handle files list this app in
-- `reads` / `writes` (Gallery shows its images, Camera adds photos, Mail attaches from it).

CREATE TABLE files (
  id INTEGER PRIMARY KEY,
  parent_id INTEGER REFERENCES files(id),   -- the folder it is in; NULL: the storage's top level
  name TEXT NOT NULL CHECK (name <> '' AND instr(name, '/') = 0),
  is_dir INTEGER NOT NULL DEFAULT 0,
  mime TEXT NOT NULL DEFAULT '',            -- '' for folders
  size INTEGER NOT NULL DEFAULT 0,          -- bytes
  modified_at INTEGER NOT NULL,             -- ms since the epoch
  image TEXT,                               -- how an image is drawn: `placeholder:KEY` or `asset:APP/NAME`
  body TEXT,                                -- a text file's content
  starred INTEGER NOT NULL DEFAULT 0,
  trashed_at INTEGER                        -- in Trash since (NULL: not in Trash)
);

CREATE INDEX files_parent ON files(parent_id, name);

-- Every file's path from the top ("DCIM/Camera/IMG_....jpg").
CREATE VIEW file_paths AS
WITH RECURSIVE p(id, path) AS (
  SELECT id, name FROM files WHERE parent_id IS NULL
  UNION ALL
  SELECT f.id, p.path || '/' || f.name FROM files f JOIN p ON f.parent_id = p.id
)
SELECT id, path FROM p;
