import Foundation
import HummingbirdBcrypt
import NVRIndex
import NVRTime

/// Users: adding them with a bcrypt password, checking a login, changing a password.
public struct Accounts: Sendable {
    public let index: any AccessStore

    /// bcrypt's cost (2^cost rounds): ~60 ms a check here at 10. `NVR_BCRYPT_COST` lowers it for
    /// tests that log in many times; it never goes below 4.
    public static let bcryptCost: UInt8 = {
        let env = ProcessInfo.processInfo.environment["NVR_BCRYPT_COST"].flatMap { UInt8($0) }
        return min(max(env ?? 10, 4), 15)
    }()

    public static let minimumPasswordLength = 8

    public init(index: any AccessStore) { self.index = index }

    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count)
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-@".contains($0)) }
    }

    static func checkPassword(_ password: String) throws {
        guard password.count >= minimumPasswordLength else {
            throw AccessError.badRequest("a password needs at least \(minimumPasswordLength) characters")
        }
        guard password.utf8.count <= 72 else {
            throw AccessError.badRequest("a password can have at most 72 bytes (bcrypt's limit)")
        }
    }

    /// Adds a user. `cameras`: the cameras a viewer may see (nil: all).
    @discardableResult
    public func add(
        name: String, password: String, role: Role, cameras: [String]? = nil, ptz: Bool = false, talk: Bool = false
    ) throws
        -> UserRecord
    {
        guard Self.isValidName(name) else {
            throw AccessError.badRequest("invalid user name '\(name.prefix(64))': letters, digits, . _ - @ (up to 64)")
        }
        try Self.checkPassword(password)
        let hash = Bcrypt.hash(password, cost: Self.bcryptCost)
        let list = try cameras.map { String(decoding: try JSONEncoder().encode($0.sorted()), as: UTF8.self) }
        guard try index.user(named: name) == nil else {
            throw AccessError.conflict("a user named '\(name)' already exists")
        }
        do {
            return try index.addUser(
                UserRecord(
                    name: name, passwordHash: hash, role: role.rawValue, cameras: list, ptz: ptz, talk: talk,
                    created90k: Time90k.now()))
        } catch let e as IndexError where !e.retryable {
            throw AccessError.conflict(e.description)  // added meanwhile by another process
        }
    }

    /// Sets a new password and ends every session of the user (their old cookies stop working).
    public func setPassword(name: String, password: String) throws {
        guard var u = try index.user(named: name), let id = u.id else {
            throw AccessError.notFound("no user named '\(name.prefix(64))'")
        }
        try Self.checkPassword(password)
        u.passwordHash = Bcrypt.hash(password, cost: Self.bcryptCost)
        u.passwordChanged90k = Time90k.now()
        try index.updateUser(u)
        _ = try index.removeSessions(userID: id)
    }

    /// Changes a user's role, cameras, PTZ or talk right.
    public func update(name: String, role: Role?, cameras: [String]??, ptz: Bool? = nil, talk: Bool? = nil) throws
        -> UserRecord
    {
        guard var u = try index.user(named: name) else {
            throw AccessError.notFound("no user named '\(name.prefix(64))'")
        }
        if let role {
            if role != .admin, u.role == Role.admin.rawValue,
                try index.users().filter({ $0.role == Role.admin.rawValue }).count == 1
            {
                throw AccessError.conflict("'\(name)' is the last admin")
            }
            u.role = role.rawValue
        }
        if let cameras {
            u.cameras = try cameras.map { String(decoding: try JSONEncoder().encode($0.sorted()), as: UTF8.self) }
        }
        if let ptz { u.ptz = ptz }
        if let talk { u.talk = talk }
        try index.updateUser(u)
        return u
    }

    public func remove(name: String) throws {
        guard let u = try index.user(named: name), let id = u.id else {
            throw AccessError.notFound("no user named '\(name.prefix(64))'")
        }
        do { try index.removeUser(id: id) } catch let e as IndexError where !e.retryable {
            throw AccessError.conflict(e.description)
        }
    }

    /// The user whose name and password these are, or nil. An unknown name costs one bcrypt
    /// check too, so timing does not tell which names exist.
    public func verify(name: String, password: String) throws -> UserRecord? {
        guard let u = try index.user(named: name) else {
            _ = Bcrypt.verify(password, hash: Self.decoyHash)
            return nil
        }
        return Bcrypt.verify(password, hash: u.passwordHash) ? u : nil
    }

    private static let decoyHash = Bcrypt.hash("no such user", cost: bcryptCost)

    /// The identity of a user reached through `via`.
    public static func identity(_ u: UserRecord, via: Identity.Via) -> Identity {
        let cameras = u.cameras.flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) }.map(Set.init)
        return Identity(
            userID: u.id, name: u.name, role: Role(rawValue: u.role) ?? .viewer, cameras: cameras, ptz: u.ptz,
            talk: u.talk, via: via)
    }

    /// With no user at all, makes `admin` with a random password and returns it (printed once
    /// by `nvr serve`; there is no default password).
    public func bootstrapAdmin() throws -> (name: String, password: String)? {
        guard try index.userCount() == 0 else { return nil }
        let password = String(Secrets.randomToken().prefix(20))
        do { try add(name: "admin", password: password, role: .admin) } catch let e as AccessError
            where e.kind == .conflict
        {
            // Another server sharing the index (a recorder node) made the first admin meanwhile.
            return nil
        }
        return ("admin", password)
    }
}
