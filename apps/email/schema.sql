-- Email: one mailbox (the phone's owner, Sam Rivera <sam.rivera@example.com>).

CREATE TABLE mails (
  id INTEGER PRIMARY KEY,
  folder TEXT NOT NULL DEFAULT 'inbox'
    CHECK (folder IN ('inbox', 'sent', 'drafts', 'archive', 'trash')),
  thread_id INTEGER,                       -- the conversation: the id of its first mail
  from_name TEXT NOT NULL DEFAULT '',
  from_addr TEXT NOT NULL DEFAULT '',
  to_addrs TEXT NOT NULL DEFAULT '',       -- comma-separated addresses
  cc_addrs TEXT NOT NULL DEFAULT '',
  subject TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL DEFAULT '',
  sent_at INTEGER NOT NULL,                -- ms since the epoch
  read INTEGER NOT NULL DEFAULT 0,
  starred INTEGER NOT NULL DEFAULT 0,
  arrives_at INTEGER                       -- not delivered yet: arrives then (NULL: in the mailbox)
);

CREATE INDEX mails_folder ON mails(folder, sent_at);
CREATE INDEX mails_thread ON mails(thread_id, sent_at);

CREATE TABLE attachments (
  id INTEGER PRIMARY KEY,
  mail_id INTEGER NOT NULL REFERENCES mails(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  mime TEXT NOT NULL DEFAULT 'application/octet-stream',
  size INTEGER NOT NULL DEFAULT 0,         -- bytes
  image TEXT,                              -- how an image is drawn (`placeholder:KEY`), as in Files
  body TEXT,                               -- a text file's content
  file_id INTEGER                          -- the Files row it was attached from, if any
);

CREATE INDEX attachments_mail ON attachments(mail_id);

-- What lists show: delivered mail only.
CREATE VIEW mailbox AS SELECT * FROM mails WHERE arrives_at IS NULL;
