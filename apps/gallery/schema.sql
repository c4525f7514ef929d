-- Gallery keeps only its own settings: the photos live in the Files app's store.
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
