import Foundation
import NVRIndex

extension PostgresIndex {
    // MARK: Users (names compare without case, as the SQLite index's NOCASE column does)

    public func users() throws -> [UserRecord] {
        try autocommit {
            try $0.fetchAll(UserRecord.self, #"SELECT * FROM "user" ORDER BY lower(name) COLLATE "C", id"#)
        }
    }

    public func user(named name: String) throws -> UserRecord? {
        try autocommit {
            try $0.fetchOne(UserRecord.self, #"SELECT * FROM "user" WHERE lower(name) = lower(?)"#, [.text(name)])
        }
    }

    public func user(id: Int64) throws -> UserRecord? {
        try autocommit { try $0.fetchOne(UserRecord.self, #"SELECT * FROM "user" WHERE id = ?"#, [.int(id)]) }
    }

    public func userCount() throws -> Int {
        try autocommit { Int(try $0.scalar(Int64.self, #"SELECT COUNT(*) FROM "user""#) ?? 0) }
    }

    @discardableResult
    public func addUser(_ user: UserRecord) throws -> UserRecord {
        try transaction { s in
            guard
                try s.scalar(
                    Int64.self, #"SELECT COUNT(*) FROM "user" WHERE lower(name) = lower(?)"#, [.text(user.name)])
                    == 0
            else {
                throw IndexError("a user named '\(user.name)' already exists")
            }
            var u = user
            u.id = try s.insert(u, into: #""user""#)
            return u
        }
    }

    public func updateUser(_ user: UserRecord) throws { try transaction { try $0.update(user, in: #""user""#) } }

    /// Removes a user with their sessions and tokens; the last admin stays (the admins' rows
    /// are locked, so two removals at once cannot both pass the check).
    public func removeUser(id: Int64) throws {
        try transaction { s in
            let admins = try s.run(#"SELECT id FROM "user" WHERE role = 'admin' FOR UPDATE"#).rows
                .map { try $0.decode(Int64.self) }
            if admins == [id] { throw IndexError("that is the last admin: add another admin first") }
            try s.execute(#"DELETE FROM "user" WHERE id = ?"#, [.int(id)])
        }
    }

    // MARK: Sessions

    public func addSession(_ session: SessionRecord) throws -> SessionRecord {
        try transaction { s in
            var r = session
            r.id = try s.insert(r, into: "session")
            return r
        }
    }

    public func session(tokenHash: Data, at now: Int64) throws -> (SessionRecord, UserRecord)? {
        try autocommit { s in
            guard
                let r = try s.fetchOne(
                    SessionRecord.self, "SELECT * FROM session WHERE token_hash = ?", [.bytes(tokenHash)]),
                r.expires90k > now,
                let u = try s.fetchOne(UserRecord.self, #"SELECT * FROM "user" WHERE id = ?"#, [.int(r.userID)])
            else { return nil }
            return (r, u)
        }
    }

    public func touchSession(id: Int64, at now: Int64, expires90k: Int64) throws {
        try autocommit {
            try $0.execute(
                "UPDATE session SET last_seen90k = ?, expires90k = ? WHERE id = ?",
                [.int(now), .int(expires90k), .int(id)])
        }
    }

    public func sessions(userID: Int64?) throws -> [SessionRecord] {
        try autocommit { s in
            if let userID {
                return try s.fetchAll(
                    SessionRecord.self, "SELECT * FROM session WHERE user_id = ? ORDER BY last_seen90k DESC",
                    [.int(userID)])
            }
            return try s.fetchAll(SessionRecord.self, "SELECT * FROM session ORDER BY last_seen90k DESC")
        }
    }

    public func removeSession(id: Int64) throws {
        try autocommit { try $0.execute("DELETE FROM session WHERE id = ?", [.int(id)]) }
    }

    public func removeSessions(userID: Int64) throws -> Int {
        try autocommit { try $0.run("DELETE FROM session WHERE user_id = ?", [.int(userID)]).changed }
    }

    @discardableResult
    public func removeExpiredSessions(at now: Int64) throws -> Int {
        try autocommit { try $0.run("DELETE FROM session WHERE expires90k <= ?", [.int(now)]).changed }
    }

    // MARK: API tokens

    public func addToken(_ token: APITokenRecord) throws -> APITokenRecord {
        try transaction { s in
            var t = token
            t.id = try s.insert(t, into: "api_token")
            return t
        }
    }

    public func token(hash: Data) throws -> (APITokenRecord, UserRecord)? {
        try autocommit { s in
            guard
                let t = try s.fetchOne(
                    APITokenRecord.self, "SELECT * FROM api_token WHERE token_hash = ?", [.bytes(hash)]),
                let u = try s.fetchOne(UserRecord.self, #"SELECT * FROM "user" WHERE id = ?"#, [.int(t.userID)])
            else { return nil }
            return (t, u)
        }
    }

    public func touchToken(id: Int64, at now: Int64) throws {
        try autocommit { try $0.execute("UPDATE api_token SET last_used90k = ? WHERE id = ?", [.int(now), .int(id)]) }
    }

    public func tokens(userID: Int64?) throws -> [APITokenRecord] {
        try autocommit { s in
            if let userID {
                return try s.fetchAll(
                    APITokenRecord.self, "SELECT * FROM api_token WHERE user_id = ? ORDER BY id", [.int(userID)])
            }
            return try s.fetchAll(APITokenRecord.self, "SELECT * FROM api_token ORDER BY id")
        }
    }

    public func removeToken(id: Int64) throws -> Bool {
        try autocommit { try $0.run("DELETE FROM api_token WHERE id = ?", [.int(id)]).changed > 0 }
    }

    // MARK: Audit

    public func addAudit(_ entry: AuditRecord) throws { try autocommit { try $0.insert(entry, into: "audit") } }

    public func audit(limit: Int, before: Int64?) throws -> [AuditRecord] {
        try autocommit { s in
            if let before {
                return try s.fetchAll(
                    AuditRecord.self, "SELECT * FROM audit WHERE id < ? ORDER BY id DESC LIMIT ?",
                    [.int(before), PostgresValue(limit)])
            }
            return try s.fetchAll(
                AuditRecord.self, "SELECT * FROM audit ORDER BY id DESC LIMIT ?", [PostgresValue(limit)])
        }
    }
}
