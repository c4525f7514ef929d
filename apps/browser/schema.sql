-- Browser, after Chrome / Firefox for Android. The web itself is read-only seeded content
-- (`pages`, `blocks`); tabs, history, bookmarks and the reading list are the user's state.

CREATE TABLE pages (
  url TEXT PRIMARY KEY,              -- https://host/path
  key TEXT NOT NULL,                 -- normalized: no scheme, no www., no trailing slash, lower case
  alias TEXT NOT NULL DEFAULT '',    -- another normalized address that opens this page (a site's root)
  site TEXT NOT NULL,
  title TEXT NOT NULL,
  available_at INTEGER               -- published later (ms): 404 until then
);
CREATE INDEX pages_key ON pages(key);

-- A page's content in order: t (title), h (heading), p (paragraph), li (list item), a (link to href).
CREATE TABLE blocks (
  id INTEGER PRIMARY KEY,
  url TEXT NOT NULL,
  pos INTEGER NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  href TEXT NOT NULL DEFAULT ''
);
CREATE INDEX blocks_url ON blocks(url, pos);

-- What the events site lists (the same facts as its pages, for tasks' parameters).
CREATE TABLE site_events (
  url TEXT PRIMARY KEY, title TEXT, day TEXT, date TEXT, start TEXT, end_time TEXT, venue TEXT, price TEXT
);

CREATE TABLE prefs (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE tabs (
  id INTEGER PRIMARY KEY,
  pos INTEGER NOT NULL DEFAULT 0,    -- index of the entry shown (back / forward move it)
  opened_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL
);

CREATE TABLE tab_entries (
  id INTEGER PRIMARY KEY,
  tab_id INTEGER NOT NULL REFERENCES tabs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  url TEXT NOT NULL DEFAULT ''       -- '' is the new tab page
);
CREATE INDEX tab_entries_tab ON tab_entries(tab_id, idx);

CREATE TABLE history (
  id INTEGER PRIMARY KEY,
  url TEXT NOT NULL,
  title TEXT NOT NULL,
  visited_at INTEGER NOT NULL
);
CREATE INDEX history_time ON history(visited_at);

CREATE TABLE bookmark_folders (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE bookmarks (
  id INTEGER PRIMARY KEY,
  folder_id INTEGER NOT NULL REFERENCES bookmark_folders(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  url TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE reading_list (
  id INTEGER PRIMARY KEY,
  url TEXT NOT NULL,
  title TEXT NOT NULL,
  added_at INTEGER NOT NULL,
  read_at INTEGER,                   -- NULL: unread
  offline INTEGER NOT NULL DEFAULT 0 -- 1: saved for offline reading
);

-- The tab in front and the entry it shows.
CREATE VIEW current_tab AS
  SELECT t.id, t.pos, coalesce(e.url, '') AS url
  FROM tabs t LEFT JOIN tab_entries e ON e.tab_id = t.id AND e.idx = t.pos
  WHERE t.id = CAST((SELECT value FROM prefs WHERE key = 'current_tab') AS INTEGER);
