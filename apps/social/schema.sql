-- Mastodon: one signed-in account (is_me = 1, @samrivera@mastodon.social).
CREATE TABLE accounts (
  id           INTEGER PRIMARY KEY,
  username     TEXT    NOT NULL,               -- 'lena' (the handle without @)
  domain       TEXT    NOT NULL,               -- 'fosstodon.org'
  display_name TEXT    NOT NULL,
  bio          TEXT    NOT NULL DEFAULT '',
  followers    INTEGER NOT NULL DEFAULT 0,     -- followers other than me
  following    INTEGER NOT NULL DEFAULT 0,
  followed     INTEGER NOT NULL DEFAULT 0,     -- 1: I follow this account
  follows_me   INTEGER NOT NULL DEFAULT 0,
  is_me        INTEGER NOT NULL DEFAULT 0,
  joined       TEXT    NOT NULL DEFAULT ''     -- 'YYYY-MM-DD'
);

-- Posts ("toots"). created_at is NULL while a post has not arrived yet (arrives_at ahead).
CREATE TABLE posts (
  id          INTEGER PRIMARY KEY,
  account_id  INTEGER NOT NULL REFERENCES accounts (id),
  content     TEXT    NOT NULL,
  cw          TEXT    NOT NULL DEFAULT '',     -- content warning ('' = none)
  image       TEXT    NOT NULL DEFAULT '',     -- placeholder:KEY ('' = none)
  image_name  TEXT    NOT NULL DEFAULT '',     -- the attached file's name / alt text
  visibility  TEXT    NOT NULL DEFAULT 'public',  -- public, unlisted, followers
  reply_to    INTEGER REFERENCES posts (id),
  created_at  INTEGER,
  arrives_at  INTEGER,
  boosts      INTEGER NOT NULL DEFAULT 0,      -- boosts by others
  favs        INTEGER NOT NULL DEFAULT 0,      -- favourites by others
  boosted     INTEGER NOT NULL DEFAULT 0,      -- 1: I boosted it
  favourited  INTEGER NOT NULL DEFAULT 0,
  bookmarked  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX posts_account ON posts (account_id, created_at);
CREATE INDEX posts_reply ON posts (reply_to);

-- Notifications: mention (post_id = the mentioning post), follow, boost / favourite (post_id =
-- my post). created_at NULL until arrives_at.
CREATE TABLE notifications (
  id         INTEGER PRIMARY KEY,
  type       TEXT    NOT NULL,
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  post_id    INTEGER REFERENCES posts (id),
  created_at INTEGER,
  arrives_at INTEGER,
  read       INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE lists (
  id         INTEGER PRIMARY KEY,
  title      TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE list_members (
  list_id    INTEGER NOT NULL REFERENCES lists (id),
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  PRIMARY KEY (list_id, account_id)
);

-- Hashtags (trending on the server); followed = 1 when I follow the tag.
CREATE TABLE tags (
  name      TEXT PRIMARY KEY,                  -- without '#'
  uses_week INTEGER NOT NULL DEFAULT 0,
  people    INTEGER NOT NULL DEFAULT 0,
  followed  INTEGER NOT NULL DEFAULT 0
);

-- The photo attached in the compose screen while it is open.
CREATE TABLE compose_media (
  id        INTEGER PRIMARY KEY,
  file_name TEXT NOT NULL,
  image     TEXT NOT NULL
);
