import ArgumentParser
import Foundation
import NVRAccess
import NVRIndex
import NVRTime

/// `nvr user …`: the people (and scripts) who may use the API and the page.
struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add, list, remove users; set passwords; list and end their sessions.",
        discussion:
            "Roles: admin (everything) and viewer (watch the cameras given with --cameras, or all; --ptz lets a viewer "
            + "turn and zoom them, --talk to talk through their speakers). Passwords are read from "
            + "the terminal (twice, not echoed) or one line of standard input; --generate makes one and prints it once.",
        subcommands: [Add.self, List.self, Set.self, Remove.self, Passwd.self, Sessions.self])

    static func cameraList(_ s: String?) -> [String]? {
        s.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "User name (letters, digits, . _ - @).") var name: String
        @Option(help: "admin or viewer.") var role: String = "viewer"
        @Option(help: "Cameras a viewer may see, comma-separated (default: all).") var cameras: String?
        @Flag(help: "A viewer may pan, tilt and zoom its cameras (admins always may).") var ptz = false
        @Flag(help: "A viewer may talk through its cameras' speakers (admins always may).") var talk = false
        @Flag(help: "Make a random password and print it once.") var generate = false

        func run() throws {
            guard let r = Role(rawValue: role) else { throw ValidationError("--role must be admin or viewer") }
            let (_, _, index) = try global.open()
            let password = generate ? String(Secrets.randomToken().prefix(20)) : try readPassword()
            let list = UserCommand.cameraList(cameras)
            do {
                try Accounts(index: index).add(
                    name: name, password: password, role: r, cameras: list, ptz: ptz, talk: talk)
            } catch { throw CommandFailure("\(error)") }
            AuditLog(index: index).record(
                AuditLog.cliUser, "user.add", target: name,
                detail: [
                    "role": r.rawValue, "cameras": list?.joined(separator: ",") ?? "all", "ptz": String(ptz),
                    "talk": String(talk),
                ])
            print("added \(r.rawValue) \(name)" + (generate ? " with password \(password) (shown once)" : ""))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        struct Row: Encodable {
            var name: String
            var role: String
            var cameras: [String]?
            var ptz: Bool
            var talk: Bool
            var created: String
            var sessions: Int
            var tokens: Int
        }

        func run() throws {
            let (_, _, index) = try global.open()
            let rows = try index.users().map { u in
                Row(
                    name: u.name, role: u.role,
                    cameras: Accounts.identity(u, via: .unauthenticated).cameras.map { $0.sorted() },
                    ptz: u.ptz || u.role == Role.admin.rawValue, talk: u.talk || u.role == Role.admin.rawValue,
                    created: Time90k.rfc3339(u.created90k),
                    sessions: try index.sessions(userID: u.id).count,
                    tokens: try index.tokens(userID: u.id).count)
            }
            if json {
                try printJSON(rows)
                return
            }
            if rows.isEmpty {
                print("no users (add one with: nvr user add NAME --role admin)")
                return
            }
            printTable(
                ["NAME", "ROLE", "CAMERAS", "PTZ", "TALK", "SESSIONS", "TOKENS", "CREATED"],
                rows.map {
                    [
                        $0.name, $0.role, $0.cameras?.joined(separator: ",") ?? "all", $0.ptz ? "yes" : "no",
                        $0.talk ? "yes" : "no",
                        String($0.sessions),
                        String($0.tokens), $0.created,
                    ]
                })
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a user's role, cameras, PTZ or talk right.")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Option(help: "admin or viewer.") var role: String?
        @Option(help: "Cameras a viewer may see, comma-separated, or 'all'.") var cameras: String?
        @Option(help: "on or off: a viewer may pan, tilt and zoom its cameras.") var ptz: String?
        @Option(help: "on or off: a viewer may talk through its cameras' speakers.") var talk: String?

        static func onOff(_ s: String?, _ option: String) throws -> Bool? {
            try s.map { v -> Bool in
                switch v.lowercased() {
                case "on", "true", "yes": return true
                case "off", "false", "no": return false
                default: throw ValidationError("--\(option) must be on or off")
                }
            }
        }

        func run() throws {
            let r = try role.map { s -> Role in
                guard let r = Role(rawValue: s) else { throw ValidationError("--role must be admin or viewer") }
                return r
            }
            let p = try Self.onOff(ptz, "ptz")
            let t = try Self.onOff(talk, "talk")
            let list: [String]?? = cameras.map { $0 == "all" ? nil : UserCommand.cameraList($0) }
            guard r != nil || p != nil || t != nil || list != nil else {
                throw ValidationError("nothing to change: give --role, --cameras, --ptz or --talk")
            }
            let (_, _, index) = try global.open()
            let u: UserRecord
            do { u = try Accounts(index: index).update(name: name, role: r, cameras: list, ptz: p, talk: t) } catch {
                throw CommandFailure("\(error)")
            }
            var detail: [String: String] = [:]
            if let r { detail["role"] = r.rawValue }
            if let list { detail["cameras"] = list?.joined(separator: ",") ?? "all" }
            if let p { detail["ptz"] = String(p) }
            if let t { detail["talk"] = String(t) }
            AuditLog(index: index).record(AuditLog.cliUser, "user.update", target: name, detail: detail)
            let now = Accounts.identity(u, via: .unauthenticated)
            print(
                "\(u.name): \(u.role), cameras \(now.cameras?.sorted().joined(separator: ",") ?? "all"), "
                    + "ptz \(now.isAdmin || u.ptz ? "on" : "off"), talk \(now.isAdmin || u.talk ? "on" : "off")")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user, their sessions and tokens.")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String

        func run() throws {
            let (_, _, index) = try global.open()
            do { try Accounts(index: index).remove(name: name) } catch { throw CommandFailure("\(error)") }
            AuditLog(index: index).record(AuditLog.cliUser, "user.remove", target: name)
            print("removed user \(name)")
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a user's password (their sessions end).")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Flag(help: "Make a random password and print it once.") var generate = false

        func run() throws {
            let (_, _, index) = try global.open()
            let password = generate ? String(Secrets.randomToken().prefix(20)) : try readPassword()
            do { try Accounts(index: index).setPassword(name: name, password: password) } catch {
                throw CommandFailure("\(error)")
            }
            AuditLog(index: index).record(AuditLog.cliUser, "user.password", target: name)
            print(
                "password of \(name) changed; their sessions ended"
                    + (generate ? "; new password \(password) (shown once)" : ""))
        }
    }

    struct Sessions: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List login sessions (of one user or all), or end them.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Only this user's sessions.") var name: String?
        @Option(help: "End the session with this id.") var revoke: Int64?
        @Flag(help: "End every listed session.") var revokeAll = false
        @Flag(help: "Print JSON.") var json = false

        struct Row: Encodable {
            var id: Int64
            var user: String
            var created: String
            var lastSeen: String
            var expires: String
            var address: String?
        }

        func run() throws {
            let (_, _, index) = try global.open()
            let users = Dictionary(
                uniqueKeysWithValues: try index.users().compactMap { u in u.id.map { ($0, u.name) } })
            var userID: Int64?
            if let name {
                guard let u = try index.user(named: name) else { throw CommandFailure("no user named '\(name)'") }
                userID = u.id
            }
            let sessions = try index.sessions(userID: userID)
            if let revoke {
                guard sessions.contains(where: { $0.id == revoke }) else {
                    throw CommandFailure("no session \(revoke)")
                }
                try index.removeSession(id: revoke)
                AuditLog(index: index).record(AuditLog.cliUser, "session.revoke", target: String(revoke))
                print("ended session \(revoke)")
                return
            }
            if revokeAll {
                for s in sessions { try index.removeSession(id: s.id!) }
                AuditLog(index: index).record(
                    AuditLog.cliUser, "session.revoke", target: name ?? "all", detail: ["count": String(sessions.count)]
                )
                print("ended \(sessions.count) sessions")
                return
            }
            let rows = sessions.map { s in
                Row(
                    id: s.id ?? 0, user: users[s.userID] ?? "?", created: Time90k.rfc3339(s.created90k),
                    lastSeen: Time90k.rfc3339(s.lastSeen90k),
                    expires: Time90k.rfc3339(s.expires90k), address: s.address)
            }
            if json {
                try printJSON(rows)
                return
            }
            printTable(
                ["ID", "USER", "LAST SEEN", "EXPIRES", "FROM"],
                rows.map { [String($0.id), $0.user, $0.lastSeen, $0.expires, $0.address ?? "-"] })
        }
    }
}

/// A password from the terminal (asked twice, not echoed) or one line of standard input.
func readPassword() throws -> String {
    if isatty(0) != 0 {
        func ask(_ prompt: String) -> String {
            FileHandle.standardError.write(Data(prompt.utf8))  // unbuffered: the prompt shows before the answer
            var t = termios()
            tcgetattr(0, &t)
            let saved = t
            t.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSANOW, &t)
            defer {
                var s = saved
                tcsetattr(0, TCSANOW, &s)
                FileHandle.standardError.write(Data("\n".utf8))
            }
            return readLine() ?? ""
        }
        let a = ask("Password: ")
        let b = ask("Again: ")
        guard a == b else { throw CommandFailure("the passwords differ") }
        return a
    }
    guard let line = readLine(), !line.isEmpty else {
        throw CommandFailure("no password on standard input (or use --generate)")
    }
    return line
}
