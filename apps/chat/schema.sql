-- Mattermost: one server, the phone's owner is Sam Rivera (@sam.rivera, user 1).

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  username TEXT NOT NULL UNIQUE,            -- without the @
  display_name TEXT NOT NULL,
  position TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'offline' CHECK (status IN ('online', 'away', 'dnd', 'offline')),
  custom_status TEXT NOT NULL DEFAULT ''
);

CREATE TABLE teams (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL
);

-- key/value: current_team
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE channels (
  id INTEGER PRIMARY KEY,
  team_id INTEGER REFERENCES teams(id),     -- NULL for direct messages
  name TEXT NOT NULL,                       -- URL name, what `in:` takes ("town-square")
  display_name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('O', 'P', 'D')),   -- open, private, direct
  purpose TEXT NOT NULL DEFAULT '',
  header TEXT NOT NULL DEFAULT '',
  dm_user_id INTEGER REFERENCES users(id),  -- the other person of a direct message
  created_at INTEGER NOT NULL,
  archived INTEGER NOT NULL DEFAULT 0
);

-- Who is in a channel; for the owner (user 1) also favorite, mute and what was read.
CREATE TABLE members (
  channel_id INTEGER NOT NULL REFERENCES channels(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  favorite INTEGER NOT NULL DEFAULT 0,
  muted INTEGER NOT NULL DEFAULT 0,
  last_viewed_at INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (channel_id, user_id)
);

CREATE TABLE posts (
  id INTEGER PRIMARY KEY,
  channel_id INTEGER NOT NULL REFERENCES channels(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  root_id INTEGER REFERENCES posts(id),     -- a reply: the thread's first post
  message TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  pinned INTEGER NOT NULL DEFAULT 0,
  saved INTEGER NOT NULL DEFAULT 0,         -- saved by the owner
  file_name TEXT,                           -- an attached file or photo
  file_mime TEXT,
  file_image TEXT,                          -- `placeholder:KEY` for photos
  arrives_at INTEGER                        -- not delivered yet (NULL: delivered)
);
CREATE INDEX posts_channel ON posts(channel_id, created_at);
CREATE INDEX posts_root ON posts(root_id);

CREATE TABLE reactions (
  post_id INTEGER NOT NULL REFERENCES posts(id),
  user_id INTEGER NOT NULL REFERENCES users(id),
  emoji TEXT NOT NULL,
  PRIMARY KEY (post_id, user_id, emoji)
);

-- A file or photo waiting to be sent with the next post of a channel (root 0) or thread.
CREATE TABLE pending_files (
  id INTEGER PRIMARY KEY,
  channel_id INTEGER NOT NULL,
  root_id INTEGER NOT NULL DEFAULT 0,
  file_name TEXT NOT NULL,
  file_mime TEXT NOT NULL DEFAULT '',
  file_image TEXT
);

-- What lists show: delivered posts only.
CREATE VIEW visible_posts AS SELECT * FROM posts WHERE arrives_at IS NULL;
