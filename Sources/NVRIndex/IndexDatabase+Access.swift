import Foundation
import GRDB
import NVRTime

extension IndexDatabase {
    // MARK: Users

    public func users() throws -> [UserRecord] {
        try pool.read { try UserRecord.order(Column("name")).fetchAll($0) }
    }

    public func user(named name: String) throws -> UserRecord? {
        try pool.read { try UserRecord.filter(Column("name") == name).fetchOne($0) }
    }

    public func user(id: Int64) throws -> UserRecord? {
        try pool.read { try UserRecord.fetchOne($0, key: id) }
    }

    public func userCount() throws -> Int { try pool.read { try UserRecord.fetchCount($0) } }

    @discardableResult
    public func addUser(_ user: UserRecord) throws -> UserRecord {
        try pool.write { db in
            guard try UserRecord.filter(Column("name") == user.name).fetchCount(db) == 0 else {
                throw IndexError("a user named '\(user.name)' already exists")
            }
            var u = user
            try u.insert(db)
            return u
        }
    }

    public func updateUser(_ user: UserRecord) throws { try pool.write { try user.update($0) } }

    /// Removes a user with their sessions and tokens; the last admin stays.
    public func removeUser(id: Int64) throws {
        try pool.write { db in
            if try String.fetchOne(db, sql: "SELECT role FROM user WHERE id = ?", arguments: [id]) == "admin",
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user WHERE role = 'admin'") == 1
            {
                throw IndexError("that is the last admin: add another admin first")
            }
            _ = try UserRecord.deleteOne(db, key: id)
        }
    }

    // MARK: Sessions

    public func addSession(_ session: SessionRecord) throws -> SessionRecord {
        try pool.write { db in
            var s = session
            try s.insert(db)
            return s
        }
    }

    /// The live session whose token hashes to `tokenHash`, and its user.
    public func session(tokenHash: Data, at now: Int64) throws -> (SessionRecord, UserRecord)? {
        try pool.read { db in
            guard let s = try SessionRecord.filter(Column("token_hash") == tokenHash).fetchOne(db), s.expires90k > now,
                let u = try UserRecord.fetchOne(db, key: s.userID)
            else { return nil }
            return (s, u)
        }
    }

    /// Slides a session's expiry (called at most once a minute per session).
    public func touchSession(id: Int64, at now: Int64, expires90k: Int64) throws {
        try pool.write {
            try $0.execute(
                sql: "UPDATE session SET last_seen90k = ?, expires90k = ? WHERE id = ?",
                arguments: [now, expires90k, id])
        }
    }

    public func sessions(userID: Int64?) throws -> [SessionRecord] {
        try pool.read { db in
            var q = SessionRecord.order(Column("last_seen90k").desc)
            if let userID { q = q.filter(Column("user_id") == userID) }
            return try q.fetchAll(db)
        }
    }

    public func removeSession(id: Int64) throws { try pool.write { _ = try SessionRecord.deleteOne($0, key: id) } }

    public func removeSessions(userID: Int64) throws -> Int {
        try pool.write { try SessionRecord.filter(Column("user_id") == userID).deleteAll($0) }
    }

    /// Deletes the sessions that expired at or before `now`; returns how many.
    @discardableResult
    public func removeExpiredSessions(at now: Int64) throws -> Int {
        try pool.write { try SessionRecord.filter(Column("expires90k") <= now).deleteAll($0) }
    }

    // MARK: API tokens

    public func addToken(_ token: APITokenRecord) throws -> APITokenRecord {
        try pool.write { db in
            var t = token
            try t.insert(db)
            return t
        }
    }

    public func token(hash: Data) throws -> (APITokenRecord, UserRecord)? {
        try pool.read { db in
            guard let t = try APITokenRecord.filter(Column("token_hash") == hash).fetchOne(db),
                let u = try UserRecord.fetchOne(db, key: t.userID)
            else { return nil }
            return (t, u)
        }
    }

    public func touchToken(id: Int64, at now: Int64) throws {
        try pool.write {
            try $0.execute(sql: "UPDATE api_token SET last_used90k = ? WHERE id = ?", arguments: [now, id])
        }
    }

    public func tokens(userID: Int64?) throws -> [APITokenRecord] {
        try pool.read { db in
            var q = APITokenRecord.order(Column("id"))
            if let userID { q = q.filter(Column("user_id") == userID) }
            return try q.fetchAll(db)
        }
    }

    public func removeToken(id: Int64) throws -> Bool { try pool.write { try APITokenRecord.deleteOne($0, key: id) } }

    // MARK: Audit

    public func addAudit(_ entry: AuditRecord) throws {
        try pool.write { db in
            var e = entry
            try e.insert(db)
        }
    }

    /// The newest entries first, before `before` (an id) when given.
    public func audit(limit: Int, before: Int64?) throws -> [AuditRecord] {
        try pool.read { db in
            var q = AuditRecord.order(Column("id").desc).limit(limit)
            if let before { q = q.filter(Column("id") < before) }
            return try q.fetchAll(db)
        }
    }
}
