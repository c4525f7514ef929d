-- Clock. Times are ms since the Unix epoch on the phone's clock (UTC, the phone's zone).

CREATE TABLE alarms (
  id INTEGER PRIMARY KEY,
  hour INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23),
  minute INTEGER NOT NULL CHECK (minute BETWEEN 0 AND 59),
  label TEXT NOT NULL DEFAULT '',
  -- Repeat days as bits: 1 = Sunday, 2 = Monday, 4 = Tuesday ... 64 = Saturday; 0 = once.
  days INTEGER NOT NULL DEFAULT 0 CHECK (days BETWEEN 0 AND 127),
  enabled INTEGER NOT NULL DEFAULT 1,
  vibrate INTEGER NOT NULL DEFAULT 1,
  ringtone TEXT NOT NULL DEFAULT 'Cesium'
);

-- When each enabled alarm rings next: the first of the coming eight days' alarm times that is
-- still ahead and falls on one of its days (any day for a one-time alarm).
CREATE VIEW alarm_next AS
WITH RECURSIVE day(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM day WHERE n < 7)
SELECT a.id AS id, a.label AS label,
  min((phone_now() / 86400000 + day.n) * 86400000 + a.hour * 3600000 + a.minute * 60000) AS at
FROM alarms a, day
WHERE a.enabled = 1
  AND (phone_now() / 86400000 + day.n) * 86400000 + a.hour * 3600000 + a.minute * 60000 > phone_now()
  AND (a.days = 0 OR (a.days >> ((phone_now() / 86400000 + day.n + 4) % 7)) & 1)
GROUP BY a.id;

CREATE TABLE timers (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL DEFAULT '',
  duration_ms INTEGER NOT NULL CHECK (duration_ms > 0),
  ends_at INTEGER,              -- while running or ringing
  remaining_ms INTEGER,         -- while paused
  state TEXT NOT NULL CHECK (state IN ('running', 'paused', 'ringing'))
);

CREATE TABLE stopwatch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  started_at INTEGER,           -- set while running
  accumulated_ms INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE laps (
  id INTEGER PRIMARY KEY,
  total_ms INTEGER NOT NULL
);

-- Cities a world clock can show (IANA time zones).
CREATE TABLE cities (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT NOT NULL,
  zone TEXT NOT NULL
);

CREATE TABLE world_clocks (
  id INTEGER PRIMARY KEY,
  city_id INTEGER NOT NULL REFERENCES cities(id),
  added_at INTEGER NOT NULL
);
