CREATE INDEX segment_camera_start ON segment(camera_id, start90k);
CREATE INDEX segment_state ON segment(state) WHERE state != 'complete';
CREATE TABLE camera (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  plugin TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  enabled INTEGER NOT NULL DEFAULT 1,
  created90k INTEGER NOT NULL
);
CREATE TABLE camera_state (
  camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
  state TEXT NOT NULL,
  reason TEXT,
  since90k INTEGER NOT NULL
);
CREATE TABLE sample_entry (
  id INTEGER PRIMARY KEY,
  codec TEXT NOT NULL,
  rfc6381 TEXT NOT NULL,
  width INTEGER NOT NULL DEFAULT 0,
  height INTEGER NOT NULL DEFAULT 0,
  sample_rate INTEGER NOT NULL DEFAULT 0,
  channels INTEGER NOT NULL DEFAULT 0,
  timescale INTEGER NOT NULL,
  extradata BLOB NOT NULL,
  box BLOB NOT NULL UNIQUE
);
CREATE TABLE segment (
  id INTEGER PRIMARY KEY,
  camera_id INTEGER NOT NULL REFERENCES camera(id),
  run_id INTEGER NOT NULL,
  run_seq INTEGER NOT NULL,
  start90k INTEGER NOT NULL,
  duration90k INTEGER NOT NULL DEFAULT 0,
  path TEXT NOT NULL UNIQUE,
  bytes INTEGER NOT NULL DEFAULT 0,
  frames INTEGER NOT NULL DEFAULT 0,
  key_frames INTEGER NOT NULL DEFAULT 0,
  video_entry_id INTEGER NOT NULL REFERENCES sample_entry(id),
  audio_entry_id INTEGER REFERENCES sample_entry(id),
  state TEXT NOT NULL CHECK (state IN ('writing', 'complete', 'deleting')),
  source TEXT NOT NULL DEFAULT 'live'
);
CREATE TABLE segment_frames (
  segment_id INTEGER PRIMARY KEY REFERENCES segment(id) ON DELETE CASCADE,
  video_index BLOB NOT NULL,
  audio_index BLOB,
  fragment_index BLOB NOT NULL,
  audio_start90k INTEGER
);
