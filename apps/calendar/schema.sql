-- Calendar: calendars and their events. Times are ms since the epoch, UTC (the phone's zone).

CREATE TABLE calendars (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  color TEXT NOT NULL DEFAULT 'blue'       -- a background of the palette (`bg`)
);

CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  calendar_id INTEGER NOT NULL REFERENCES calendars(id),
  title TEXT NOT NULL,
  start_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL,                 -- all-day events end at midnight after their last day
  all_day INTEGER NOT NULL DEFAULT 0,
  location TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  reminder_min INTEGER,                    -- minutes before the start; NULL: no notification
  guests TEXT NOT NULL DEFAULT '',         -- comma-separated addresses
  CHECK (end_at >= start_at)
);

CREATE INDEX events_start ON events(start_at);
