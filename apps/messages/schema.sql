-- SMS conversations. A thread is one other party (phone number or short code); its snippet,
-- time and unread count are derived from its messages (no denormalised copies to keep in sync).
CREATE TABLE threads (
    id          INTEGER PRIMARY KEY,
    address     TEXT    NOT NULL,              -- phone number or short code, as first used
    name        TEXT    NOT NULL DEFAULT '',   -- contact name when the thread was started ('' if
                                               -- unknown); screens prefer the live Contacts name
    created_at  INTEGER NOT NULL,              -- ms since the epoch (virtual clock)
    -- Last 10 digits of the address; the same key as contacts.phone_key, so numbers typed in any
    -- format find their thread and their contact. Short codes are kept whole ("55501").
    address_key TEXT GENERATED ALWAYS AS (
        substr(replace(replace(replace(replace(replace(replace(
            address, ' ', ''), '-', ''), '(', ''), ')', ''), '+', ''), '.', ''), -10)
    ) VIRTUAL
);
CREATE UNIQUE INDEX threads_address_key ON threads (address_key);

CREATE TABLE messages (
    id        INTEGER PRIMARY KEY,
    thread_id INTEGER NOT NULL REFERENCES threads (id),
    body      TEXT    NOT NULL,
    sent_at   INTEGER NOT NULL,                -- ms since the epoch (virtual clock)
    outgoing  INTEGER NOT NULL,                -- 1 = sent by the phone's owner, 0 = received
    read      INTEGER NOT NULL DEFAULT 1,      -- 0 = unread (received messages only)
    status    TEXT    NOT NULL DEFAULT 'received'  -- 'received', 'sent', 'delivered'
);
CREATE INDEX messages_thread ON messages (thread_id, sent_at);
