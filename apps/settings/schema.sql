-- Settings: the phone's mutable system state.
--
-- `settings` is the key-value store Android keeps in Settings.System / Secure / Global: every
-- switch, slider and single-choice preference is one row. Values are TEXT as on Android
-- ('1' / '0' for switches, numbers as decimal text, choices by their stored value).
-- Lists of things (Wi-Fi networks, Bluetooth devices, apps, ...) get their own tables.

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- Read-only facts about the device (About phone). Not user settings, so kept apart.
CREATE TABLE device_info (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- Wi-Fi networks the phone can see (in_range = 1) or has saved (saved = 1).
CREATE TABLE wifi_networks (
  id             INTEGER PRIMARY KEY,
  ssid           TEXT NOT NULL UNIQUE,
  security       TEXT NOT NULL,                -- 'None', 'WPA2-Personal', 'WPA3-Personal', 'WPA2/WPA3-Personal', 'WPA2-Enterprise'
  password       TEXT,                         -- NULL for open networks; never shown (tasks hand it to the agent)
  signal         INTEGER NOT NULL DEFAULT 0,   -- 0..4 bars
  in_range       INTEGER NOT NULL DEFAULT 1,
  frequency      TEXT NOT NULL DEFAULT '2.4 GHz',
  saved          INTEGER NOT NULL DEFAULT 0,
  connected      INTEGER NOT NULL DEFAULT 0,   -- at most one row; only shown as connected while Wi-Fi is on
  auto_connect   INTEGER NOT NULL DEFAULT 1,
  metered        TEXT NOT NULL DEFAULT 'auto', -- 'auto' | 'metered' | 'unmetered'
  randomized_mac INTEGER NOT NULL DEFAULT 1,
  ip_address     TEXT,                         -- address this network hands out to the phone
  gateway        TEXT,
  link_speed     INTEGER,                      -- Mbps
  last_connected INTEGER                       -- ms since the epoch
);

CREATE TABLE bluetooth_devices (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,                -- name the device advertises
  alias          TEXT,                         -- name the user gave it (Rename); NULL = use `name`
  address        TEXT NOT NULL UNIQUE,
  kind           TEXT NOT NULL,                -- 'headphones' | 'car' | 'speaker' | 'watch' | 'keyboard' | 'mouse' | 'computer' | 'tv' | 'phone'
  paired         INTEGER NOT NULL DEFAULT 0,
  connected      INTEGER NOT NULL DEFAULT 0,
  available      INTEGER NOT NULL DEFAULT 0,   -- nearby and discoverable (shown in Pair new device)
  battery        INTEGER,                      -- percent, when the device reports it
  phone_calls    INTEGER NOT NULL DEFAULT 1,   -- profile switches on the device detail page
  media_audio    INTEGER NOT NULL DEFAULT 1,
  contact_sharing INTEGER NOT NULL DEFAULT 0,
  last_connected INTEGER
);

CREATE TABLE apps (
  id             TEXT PRIMARY KEY,             -- short id; equals the phonebench app id when `launch` is set
  name           TEXT NOT NULL,
  package        TEXT NOT NULL UNIQUE,
  version        TEXT NOT NULL,
  system         INTEGER NOT NULL DEFAULT 0,   -- preinstalled: can be disabled, not uninstalled
  installed      INTEGER NOT NULL DEFAULT 1,
  enabled        INTEGER NOT NULL DEFAULT 1,
  running        INTEGER NOT NULL DEFAULT 0,   -- Force stop is enabled while running
  notifications  INTEGER NOT NULL DEFAULT 1,
  notif_per_week INTEGER NOT NULL DEFAULT 0,
  app_mb         REAL NOT NULL,                -- storage, in MB (1 MB = 1,000,000 bytes, as Android counts)
  data_mb        REAL NOT NULL,
  cache_mb       REAL NOT NULL,
  battery_pct    REAL NOT NULL DEFAULT 0,      -- use since last full charge
  mobile_data_mb REAL NOT NULL DEFAULT 0,      -- this billing cycle
  installed_on   INTEGER,                      -- ms since the epoch
  last_opened    INTEGER,                      -- ms since the epoch
  launch         TEXT                          -- phonebench app id that "Open" starts, if any
);

-- Android runtime permission groups.
CREATE TABLE permissions (
  id     TEXT PRIMARY KEY,                     -- 'location', 'camera', ...
  label  TEXT NOT NULL,                        -- 'Location'
  kind   TEXT NOT NULL,                        -- option set: 'location' | 'foreground' (camera, mic) | 'simple'
  sort   INTEGER NOT NULL
);

CREATE TABLE app_permissions (
  app_id      TEXT NOT NULL REFERENCES apps(id),
  permission  TEXT NOT NULL REFERENCES permissions(id),
  state       TEXT NOT NULL,                   -- 'always' | 'while_in_use' | 'allowed' | 'ask' | 'denied'
  last_access INTEGER,                         -- ms since the epoch (Location "Recent access")
  PRIMARY KEY (app_id, permission)
);

CREATE TABLE accounts (
  id        INTEGER PRIMARY KEY,
  type      TEXT NOT NULL,                     -- 'Google', 'Exchange', ...
  email     TEXT NOT NULL UNIQUE,
  sync      INTEGER NOT NULL DEFAULT 1,
  last_sync INTEGER
);

-- Languages the system offers; `position` is set (1, 2, ...) for the user's preferred languages.
CREATE TABLE languages (
  code     TEXT PRIMARY KEY,                   -- BCP 47: 'en-GB'
  name     TEXT NOT NULL,                      -- native name: 'English (United Kingdom)'
  position INTEGER
);

CREATE TABLE time_zones (
  id             TEXT PRIMARY KEY,             -- IANA id: 'Europe/London'
  city           TEXT NOT NULL,                -- 'London'
  region         TEXT NOT NULL,                -- 'United Kingdom'
  name           TEXT NOT NULL,                -- 'Greenwich Mean Time' (in effect on the clock's date)
  offset_minutes INTEGER NOT NULL              -- UTC offset on the clock's date
);

-- Storage categories other than Apps (which is summed from `apps`).
CREATE TABLE storage_categories (
  key   TEXT PRIMARY KEY,
  label TEXT NOT NULL,
  mb    REAL NOT NULL,
  sort  INTEGER NOT NULL
);
