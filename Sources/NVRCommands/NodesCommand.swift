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

    /// With recorder nodes, what changes one storage root's footage runs on that root's node:
    /// a machine that is no node would take every node's rows for its own.
    static func refuseOutsideNodes(_ index: any IndexStore, _ what: String) throws {
        guard let pg = index as? PostgresIndex, pg.node == nil, try !pg.nodes().isEmpty else { return }
        throw CommandFailure(
            "\(what) changes one node's footage: run it on a node (its config with [cluster] node, or its storage root)"
        )
    }

    static func open(_ global: GlobalOptions) throws -> (NVRConfig, PostgresIndex) {
        let (config, _, index) = try global.open()
        guard let pg = index as? PostgresIndex else {
            throw CommandFailure("nodes share a PostgreSQL index: this one is SQLite (set [index] url)")
        }
        return (config, pg)
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Each node: live or not, last heartbeat, cameras it records, its storage.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let (config, index) = try NodesCommand.open(global)
            let nodes = try NodeSummary.list(index, me: config.clusterNode)
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
