import ArgumentParser
import Foundation
import NVRCluster
import NVRIndex
import NVRIndexPostgres

/// `nvr nodes`: the recorder nodes sharing the PostgreSQL index, what each records and when it
/// was last heard from (design/scale-out.md).
struct NodesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nodes", abstract: "List the recorder nodes sharing the PostgreSQL index and their cameras.",
        subcommands: [List.self, Forget.self], defaultSubcommand: List.self)

    struct Node: Encodable {
        var name: String
        var live: Bool
        var heartbeatSecondsAgo: Double
        var cameras: [String]
        var advertiseURL: String?
        var storageRoot: String
        var storageMountedHere: Bool
    }

    static func open(_ global: GlobalOptions) throws -> (NVRConfig, PostgresIndex) {
        let (config, _, index) = try global.open()
        guard let pg = index as? PostgresIndex else {
            throw CommandFailure("nodes share a PostgreSQL index: this one is SQLite (set [index] url)")
        }
        return (config, pg)
    }

    /// Every node with the cameras it holds a lease on now.
    static func nodes(_ index: PostgresIndex, me: String?) throws -> [Node] {
        let names = Dictionary(
            uniqueKeysWithValues: try index.cameras(includeRemoved: true).compactMap { c in
                c.id.map { ($0, c.name) }
            })
        let leases = try index.leases()
        return try index.nodes().map { n in
            Node(
                name: n.name, live: n.heartbeatAge < NodeLeases.Timing().leaseSeconds,
                heartbeatSecondsAgo: (n.heartbeatAge * 10).rounded() / 10,
                cameras: leases.filter { $0.node == n.name }.compactMap { names[$0.cameraID] }.sorted(),
                advertiseURL: n.advertiseURL, storageRoot: n.storageRoot,
                storageMountedHere: n.name == me || NodeStorage.isMounted(root: n.storageRoot, id: n.storageID))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Each node: live or not, last heartbeat, cameras it records, its storage.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let (config, index) = try NodesCommand.open(global)
            let nodes = try NodesCommand.nodes(index, me: config.clusterNode)
            if json { return try printJSON(["nodes": nodes]) }
            guard !nodes.isEmpty else { return print("no nodes yet (start one with: nvr serve --node NAME)") }
            printTable(
                ["NODE", "STATE", "HEARTBEAT", "CAMERAS", "STORAGE", "URL"],
                nodes.map { n in
                    [
                        n.name, n.live ? "live" : "gone", "\(n.heartbeatSecondsAgo) s ago",
                        n.cameras.isEmpty ? "-" : "\(n.cameras.count): \(n.cameras.joined(separator: ","))",
                        n.storageRoot + (n.storageMountedHere ? "" : " (not mounted here)"), n.advertiseURL ?? "-",
                    ]
                })
        }
    }

    struct Forget: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a node that is gone for good from the list (its footage stays in the index).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Node name.") var name: String

        func run() throws {
            let (_, index) = try NodesCommand.open(global)
            guard let n = try index.nodes().first(where: { $0.name == name }) else {
                throw CommandFailure("no node named '\(name)'")
            }
            guard n.heartbeatAge >= NodeLeases.Timing().leaseSeconds else {
                throw CommandFailure("node \(name) is live (heard from \(Int(n.heartbeatAge)) s ago): stop it first")
            }
            _ = try index.forgetNode(name)
            print("forgot node \(name)")
        }
    }
}
