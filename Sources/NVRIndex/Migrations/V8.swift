import GRDB

/// Schema version 8: users and what they may do (issue: users, login, HTTPS, a writable API).
/// Passwords are bcrypt hashes; session cookies and API tokens are stored as SHA-256 hashes
/// of the secret, so a copy of the index gives no way in. Every change made through the API or
/// the CLI is written to `audit`. Clips a user marks "keep" are never deleted by retention.
/// A camera removed without its recordings keeps its row (`removed90k`), so the recordings stay
/// attached to it and a camera added again under that name finds them.
enum MigrationV8 {
    static let name = "v8"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE user (
              id INTEGER PRIMARY KEY,
              name TEXT NOT NULL UNIQUE COLLATE NOCASE,
              password_hash TEXT NOT NULL,
              role TEXT NOT NULL CHECK (role IN ('admin', 'viewer')),
              -- JSON array of the camera names a viewer may see; NULL: every camera.
              cameras TEXT,
              created90k INTEGER NOT NULL,
              password_changed90k INTEGER NOT NULL
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
            CREATE INDEX audit_time ON audit(time90k);
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
            CREATE INDEX protected_clip_camera ON protected_clip(camera_id, start90k);
            ALTER TABLE camera ADD COLUMN removed90k INTEGER;
            """)
    }
}
