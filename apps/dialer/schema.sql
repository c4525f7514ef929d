-- Phone: the call log, voicemail, blocked numbers and settings. Names come from Contacts
-- (matched on the last 10 digits, as Android's contacts provider does).
CREATE TABLE calls (
  id         INTEGER PRIMARY KEY,
  number     TEXT    NOT NULL,              -- as dialled or as the network gave it
  type       TEXT    NOT NULL,              -- incoming, outgoing, missed, blocked
  started_at INTEGER,                       -- ms since the epoch; NULL until it arrives
  arrives_at INTEGER,                       -- a call still to come (missed, with a notification)
  duration   INTEGER NOT NULL DEFAULT 0,    -- seconds talked (0 for missed / blocked)
  active     INTEGER NOT NULL DEFAULT 0,    -- 1: the call in progress
  muted      INTEGER NOT NULL DEFAULT 0,
  speaker    INTEGER NOT NULL DEFAULT 0,
  on_hold    INTEGER NOT NULL DEFAULT 0,
  dtmf       TEXT    NOT NULL DEFAULT '',   -- keys pressed during the call
  is_new     INTEGER NOT NULL DEFAULT 0,    -- a missed call not yet seen in Recents
  number_key TEXT GENERATED ALWAYS AS (
    substr(replace(replace(replace(replace(replace(replace(number, ' ', ''), '-', ''), '(', ''), ')', ''), '+', ''), '.', ''), -10)
  ) VIRTUAL
);
CREATE INDEX calls_key ON calls (number_key, started_at);

CREATE TABLE voicemails (
  id          INTEGER PRIMARY KEY,
  number      TEXT    NOT NULL,
  received_at INTEGER,                      -- NULL until it arrives
  arrives_at  INTEGER,
  duration    INTEGER NOT NULL,             -- seconds
  transcript  TEXT    NOT NULL,
  heard       INTEGER NOT NULL DEFAULT 0,
  number_key  TEXT GENERATED ALWAYS AS (
    substr(replace(replace(replace(replace(replace(replace(number, ' ', ''), '-', ''), '(', ''), ')', ''), '+', ''), '.', ''), -10)
  ) VIRTUAL
);

CREATE TABLE blocked (
  id         INTEGER PRIMARY KEY,
  number     TEXT    NOT NULL,
  added_at   INTEGER NOT NULL,
  number_key TEXT GENERATED ALWAYS AS (
    substr(replace(replace(replace(replace(replace(replace(number, ' ', ''), '-', ''), '(', ''), ')', ''), '+', ''), '.', ''), -10)
  ) VIRTUAL
);

-- block_unknown ('0'/'1'), caller_id_spam ('0'/'1'), sort_by ('first'/'last'),
-- vibrate_for_calls ('0'/'1'), voicemail_notifications ('0'/'1')
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
