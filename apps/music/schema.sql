-- Retro Music: the local library (artists, albums, songs), playlists, the play queue and the
-- player. Times are ms since the epoch (virtual clock); durations and positions are ms.
CREATE TABLE artists (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL
);

CREATE TABLE albums (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  artist_id INTEGER NOT NULL REFERENCES artists(id),
  year INTEGER NOT NULL,
  genre TEXT NOT NULL DEFAULT '',
  cover TEXT NOT NULL DEFAULT ''
);

CREATE TABLE songs (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  album_id INTEGER NOT NULL REFERENCES albums(id),
  artist_id INTEGER NOT NULL REFERENCES artists(id),
  track INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL CHECK (duration_ms > 0),
  year INTEGER NOT NULL,
  genre TEXT NOT NULL DEFAULT '',
  play_count INTEGER NOT NULL DEFAULT 0,
  last_played INTEGER,
  date_added INTEGER NOT NULL,
  path TEXT NOT NULL DEFAULT ''
);

CREATE TABLE playlists (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL CHECK (trim(name) <> ''),
  created_at INTEGER NOT NULL
);

CREATE TABLE playlist_songs (
  id INTEGER PRIMARY KEY,
  playlist_id INTEGER NOT NULL REFERENCES playlists(id) ON DELETE CASCADE,
  song_id INTEGER NOT NULL REFERENCES songs(id),
  position INTEGER NOT NULL,
  added_at INTEGER NOT NULL
);

-- The play queue in playing order (shuffled while shuffle is on); orig_pos keeps the order it
-- was queued in, restored when shuffle is turned off.
CREATE TABLE queue (
  position INTEGER PRIMARY KEY,
  song_id INTEGER NOT NULL REFERENCES songs(id),
  orig_pos INTEGER NOT NULL
);

-- One row. idx: the queue position playing; while 'playing' the position is
-- pos_ms + (now - started_at), else pos_ms.
CREATE TABLE player (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  idx INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'stopped' CHECK (state IN ('playing', 'paused', 'stopped')),
  pos_ms INTEGER NOT NULL DEFAULT 0,
  started_at INTEGER NOT NULL DEFAULT 0,
  shuffle INTEGER NOT NULL DEFAULT 0,
  repeat_mode TEXT NOT NULL DEFAULT 'off' CHECK (repeat_mode IN ('off', 'all', 'one'))
);

-- What is playing now, with its live position.
CREATE VIEW now_playing AS
SELECT p.idx, p.state, p.shuffle, p.repeat_mode, s.id AS song_id, s.title, s.duration_ms, s.album_id, s.artist_id,
  a.name AS artist, al.title AS album, al.cover,
  min(s.duration_ms, CASE WHEN p.state = 'playing' THEN p.pos_ms + (phone_now() - p.started_at) ELSE p.pos_ms END) AS position_ms
FROM player p JOIN queue q ON q.position = p.idx JOIN songs s ON s.id = q.song_id
JOIN artists a ON a.id = s.artist_id JOIN albums al ON al.id = s.album_id;
