-- Contacts: one row per contact (one phone number and one e-mail address each, as most
-- benchmark tasks need; Android's multi-row "data" table is deliberately not modelled).
-- Empty text is '' (never NULL) so that edit forms round-trip without NULL checks.
CREATE TABLE contacts (
    id           INTEGER PRIMARY KEY,
    first_name   TEXT    NOT NULL DEFAULT '',
    last_name    TEXT    NOT NULL DEFAULT '',
    display_name TEXT    NOT NULL,               -- "first last", trimmed; what lists show
    phone        TEXT    NOT NULL DEFAULT '',    -- as entered/shown, e.g. "(206) 555-0134"
    phone_label  TEXT    NOT NULL DEFAULT 'Mobile',
    email        TEXT    NOT NULL DEFAULT '',
    company      TEXT    NOT NULL DEFAULT '',
    job_title    TEXT    NOT NULL DEFAULT '',
    address      TEXT    NOT NULL DEFAULT '',
    birthday     TEXT    NOT NULL DEFAULT '',    -- 'YYYY-MM-DD' or ''
    notes        TEXT    NOT NULL DEFAULT '',
    starred      INTEGER NOT NULL DEFAULT 0,     -- 1 = in Favorites
    created_at   INTEGER NOT NULL,               -- ms since the epoch (virtual clock)
    updated_at   INTEGER NOT NULL,
    -- Last 10 digits of the phone number: how numbers typed in different formats are matched
    -- ("+1 206 555 0134", "2065550134" and "(206) 555-0134" share "2065550134"). Messages
    -- matches its thread addresses against this column.
    phone_key    TEXT GENERATED ALWAYS AS (
        substr(replace(replace(replace(replace(replace(replace(
            phone, ' ', ''), '-', ''), '(', ''), ')', ''), '+', ''), '.', ''), -10)
    ) VIRTUAL
);
CREATE INDEX contacts_display_name ON contacts (display_name COLLATE NOCASE);
CREATE INDEX contacts_phone_key ON contacts (phone_key);
