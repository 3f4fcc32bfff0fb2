import ArgumentParser
import Foundation
import NVRAccess
import NVRIndex
import NVRTime

/// `nvr token …`: bearer tokens for scripts (curl, Home Assistant and the like).
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Create, list and remove API tokens.",
        discussion:
            "A token acts as its user: curl -H \"Authorization: Bearer $TOKEN\" http://127.0.0.1:8080/api/cameras",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a token for a user; it is printed once (only its hash is kept).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The user the token acts as.") var user: String
        @Option(help: "What the token is for (shown in lists).") var name: String
        @Flag(help: "Print only the token (for scripts: TOKEN=$(nvr token add … --quiet)).") var quiet = false

        func run() throws {
            let (_, _, index) = try global.open()
            guard let u = try index.user(named: user) else {
                throw CommandFailure("no user named '\(user)' (add one with: nvr user add)")
            }
            let made: (token: String, record: APITokenRecord)
            do { made = try TokenStore(index: index).create(for: u, name: name) } catch {
                throw CommandFailure("\(error)")
            }
            AuditLog(index: index).record(AuditLog.cliUser, "token.add", target: name, detail: ["user": user])
            if quiet {
                print(made.token)
            } else {
                print("token \(made.record.id ?? 0) for \(user) (\(name)), shown once:\n\(made.token)")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never the tokens themselves).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        struct Row: Encodable {
            var id: Int64
            var name: String
            var user: String
            var created: String
            var lastUsed: String?
        }

        func run() throws {
            let (_, _, index) = try global.open()
            let users = Dictionary(
                uniqueKeysWithValues: try index.users().compactMap { u in u.id.map { ($0, u.name) } })
            let rows = try index.tokens().map { t in
                Row(
                    id: t.id ?? 0, name: t.name, user: users[t.userID] ?? "?", created: Time90k.rfc3339(t.created90k),
                    lastUsed: t.lastUsed90k.map(Time90k.rfc3339))
            }
            if json {
                try printJSON(rows)
                return
            }
            printTable(
                ["ID", "NAME", "USER", "CREATED", "LAST USED"],
                rows.map { [String($0.id), $0.name, $0.user, $0.created, $0.lastUsed ?? "never"] })
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a token: scripts using it get 401 at once.")
        @OptionGroup var global: GlobalOptions
        @Argument var id: Int64

        func run() throws {
            let (_, _, index) = try global.open()
            guard try index.removeToken(id: id) else { throw CommandFailure("no token \(id)") }
            AuditLog(index: index).record(AuditLog.cliUser, "token.remove", target: String(id))
            print("removed token \(id)")
        }
    }
}
