CREATE INDEX audit_time ON audit(time90k);
CREATE INDEX card_slice_camera_start ON card_slice(camera_id, start90k);
CREATE INDEX deleted_range_camera ON deleted_range(camera_id, start90k);
CREATE INDEX event_camera_start ON event(camera_id, start90k);
CREATE INDEX event_length ON event(end90k - start90k);
CREATE INDEX event_open ON event(start90k) WHERE end90k IS NULL;
CREATE INDEX event_start ON event(start90k);
CREATE INDEX protected_clip_camera ON protected_clip(camera_id, start90k);
CREATE INDEX review_mark_event ON review_mark(event_id);
CREATE INDEX segment_camera_duration ON segment(camera_id, duration90k);
CREATE INDEX segment_camera_start ON segment(camera_id, start90k);
CREATE INDEX segment_retention ON segment(camera_id, has_event, start90k);
CREATE INDEX segment_state ON segment(state) WHERE state != 'complete';
CREATE INDEX session_user ON session(user_id);
CREATE TABLE api_token (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  token_hash BLOB NOT NULL UNIQUE,
  user_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  created90k INTEGER NOT NULL,
  last_used90k INTEGER
);
CREATE TABLE audit (
  id INTEGER PRIMARY KEY,
  time90k INTEGER NOT NULL,
  user TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  detail TEXT,
  address TEXT
);
CREATE TABLE camera (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  plugin TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  enabled INTEGER NOT NULL DEFAULT 1,
  created90k INTEGER NOT NULL
, removed90k INTEGER, preferred_node TEXT);
CREATE TABLE camera_plugin_status (
  camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  updated90k INTEGER NOT NULL
);
CREATE TABLE camera_recording (
  camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
  mode TEXT NOT NULL DEFAULT 'continuous' CHECK (mode IN ('continuous', 'events', 'off')),
  schedule TEXT,
  tz TEXT,
  pre_roll90k INTEGER NOT NULL DEFAULT 450000,
  post_roll90k INTEGER NOT NULL DEFAULT 900000,
  motion TEXT NOT NULL DEFAULT '{}'
, detect TEXT NOT NULL DEFAULT '{}');
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
CREATE TABLE card_slice (
  id INTEGER PRIMARY KEY,
  camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
  file_id TEXT NOT NULL,
  name TEXT NOT NULL,
  start90k INTEGER NOT NULL,
  end90k INTEGER NOT NULL CHECK (end90k >= start90k),
  bytes INTEGER NOT NULL,
  seen90k INTEGER NOT NULL, on_timeline INTEGER NOT NULL DEFAULT 1, source TEXT NOT NULL DEFAULT 'card' CHECK (source IN ('card', 'cloud')),
  UNIQUE (camera_id, file_id)
);
CREATE TABLE deleted_range (
  id INTEGER PRIMARY KEY,
  camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
  start90k INTEGER NOT NULL,
  end90k INTEGER NOT NULL CHECK (end90k > start90k),
  -- 'user' (a range deleted by someone) or 'retention'; the newest reason of a merged span.
  reason TEXT NOT NULL,
  deleted90k INTEGER NOT NULL
);
CREATE TABLE "event" (
  id INTEGER PRIMARY KEY,
  camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
  start90k INTEGER NOT NULL,
  end90k INTEGER,
  type TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('plugin', 'motion', 'detection')),
  score REAL,
  snapshot90k INTEGER,
  pre_roll90k INTEGER NOT NULL DEFAULT 0,
  post_roll90k INTEGER NOT NULL DEFAULT 0,
  box TEXT
, zones TEXT);
CREATE TABLE protected_clip (
  id INTEGER PRIMARY KEY,
  camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
  start90k INTEGER NOT NULL,
  end90k INTEGER NOT NULL CHECK (end90k > start90k),
  event_id INTEGER REFERENCES event(id) ON DELETE SET NULL,
  note TEXT NOT NULL DEFAULT '',
  created90k INTEGER NOT NULL,
  created_by TEXT NOT NULL
);
CREATE TABLE review_mark (
  user TEXT NOT NULL,
  event_id INTEGER NOT NULL REFERENCES event(id) ON DELETE CASCADE,
  marked90k INTEGER NOT NULL,
  PRIMARY KEY (user, event_id)
) WITHOUT ROWID;
CREATE TABLE review_state (
  user TEXT PRIMARY KEY,
  reviewed_until90k INTEGER NOT NULL
);
CREATE TABLE run_counter (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  next INTEGER NOT NULL
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
, has_event INTEGER NOT NULL DEFAULT 0, node TEXT);
CREATE TABLE segment_frames (
  segment_id INTEGER PRIMARY KEY REFERENCES segment(id) ON DELETE CASCADE,
  video_index BLOB NOT NULL,
  audio_index BLOB,
  fragment_index BLOB NOT NULL,
  audio_start90k INTEGER
);
CREATE TABLE session (
  id INTEGER PRIMARY KEY,
  token_hash BLOB NOT NULL UNIQUE,
  user_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  csrf TEXT NOT NULL,
  created90k INTEGER NOT NULL,
  last_seen90k INTEGER NOT NULL,
  expires90k INTEGER NOT NULL,
  address TEXT,
  user_agent TEXT
);
CREATE TABLE setting (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE user (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'viewer')),
  -- JSON array of the camera names a viewer may see; NULL: every camera.
  cameras TEXT,
  created90k INTEGER NOT NULL,
  password_changed90k INTEGER NOT NULL
, ptz INTEGER NOT NULL DEFAULT 0, talk INTEGER NOT NULL DEFAULT 0);
