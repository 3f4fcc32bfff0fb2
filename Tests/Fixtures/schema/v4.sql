CREATE INDEX event_camera_start ON event(camera_id, start90k);
CREATE INDEX event_length ON event(end90k - start90k);
CREATE INDEX event_open ON event(start90k) WHERE end90k IS NULL;
CREATE INDEX event_start ON event(start90k);
CREATE INDEX segment_camera_duration ON segment(camera_id, duration90k);
CREATE INDEX segment_camera_start ON segment(camera_id, start90k);
CREATE INDEX segment_retention ON segment(camera_id, has_event, start90k);
CREATE INDEX segment_state ON segment(state) WHERE state != 'complete';
CREATE TABLE camera (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  plugin TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  enabled INTEGER NOT NULL DEFAULT 1,
  created90k INTEGER NOT NULL
);
CREATE TABLE camera_recording (
  camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
  mode TEXT NOT NULL DEFAULT 'continuous' CHECK (mode IN ('continuous', 'events', 'off')),
  schedule TEXT,
  tz TEXT,
  pre_roll90k INTEGER NOT NULL DEFAULT 450000,
  post_roll90k INTEGER NOT NULL DEFAULT 900000,
  motion TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE camera_retention (
  camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
  continuous_days REAL,
  event_days REAL,
  max_bytes INTEGER
);
CREATE TABLE camera_state (
  camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
  state TEXT NOT NULL,
  reason TEXT,
  since90k INTEGER NOT NULL
);
CREATE TABLE event (
  id INTEGER PRIMARY KEY,
  camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
  start90k INTEGER NOT NULL,
  end90k INTEGER,
  type TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('plugin', 'motion')),
  score REAL,
  snapshot90k INTEGER,
  pre_roll90k INTEGER NOT NULL DEFAULT 0,
  post_roll90k INTEGER NOT NULL DEFAULT 0
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
, has_event INTEGER NOT NULL DEFAULT 0);
CREATE TABLE segment_frames (
  segment_id INTEGER PRIMARY KEY REFERENCES segment(id) ON DELETE CASCADE,
  video_index BLOB NOT NULL,
  audio_index BLOB,
  fragment_index BLOB NOT NULL,
  audio_start90k INTEGER
);
CREATE TABLE setting (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
