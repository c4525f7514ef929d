CREATE TABLE accounts (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  initial_balance REAL NOT NULL DEFAULT 0,
  position INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE categories (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,              -- expense | income
  color TEXT NOT NULL,             -- a palette swatch
  budget REAL,                     -- monthly budget (expense categories), NULL = none
  position INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE transactions (
  id INTEGER PRIMARY KEY,
  type TEXT NOT NULL,              -- expense | income
  amount REAL NOT NULL,            -- positive, in dollars
  category_id INTEGER NOT NULL REFERENCES categories(id),
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  date TEXT NOT NULL,              -- YYYY-MM-DD
  note TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL DEFAULT 0,
  arrives_at INTEGER               -- a recurring payment not yet due: added (and notified) then
);
CREATE TABLE transfers (
  id INTEGER PRIMARY KEY,
  from_account INTEGER NOT NULL REFERENCES accounts(id),
  to_account INTEGER NOT NULL REFERENCES accounts(id),
  amount REAL NOT NULL,
  date TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL DEFAULT 0
);
