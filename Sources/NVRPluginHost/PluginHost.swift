import CNVRPlugin
import Foundation
import Synchronization

/// Loads camera plugins from a directory with dlopen and remembers each outcome.
/// A plugin that fails to load is an error for the cameras that use it only.
public final class PluginHost: Sendable {
    public let directory: String

    /// The running executable's directory (/proc/self/exe on Linux): where the package and a
    /// build put the plugin libraries when nvr.toml names no other.
    public static var executableDirectory: String {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }
    private let cache = Mutex<[String: Result<LoadedPlugin, PluginError>]>([:])

    public init(directory: String) { self.directory = directory }

    /// The library file a plugin name maps to: lib<product>.so, product "nvr-plugin-<name>".
    public func libraryPath(for name: String) -> String { directory + "/libnvr-plugin-\(name).so" }

    public func plugin(named name: String) throws -> LoadedPlugin {
        if let cached = cache.withLock({ $0[name] }) { return try cached.get() }
        let result = Result { try load(name: name) }.mapError { $0 as? PluginError ?? PluginError("\($0)") }
        cache.withLock { $0[name] = result }
        return try result.get()
    }

    /// Every plugin library in the directory, loaded or with its error.
    public func discover() -> [(name: String, result: Result<LoadedPlugin, PluginError>)] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasPrefix("libnvr-plugin-") && $0.hasSuffix(".so") }.sorted().map { file in
            let name = String(file.dropFirst("libnvr-plugin-".count).dropLast(3))
            return (name, Result { try plugin(named: name) }.mapError { $0 as? PluginError ?? PluginError("\($0)") })
        }
    }

    private func load(name: String) throws -> LoadedPlugin {
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }), !name.isEmpty else {
            throw PluginError("invalid plugin name '\(name)'")
        }
        let path = libraryPath(for: name)
        guard FileManager.default.fileExists(atPath: path) else {
            throw PluginError("plugin '\(name)' not found: no \(path) (plugins dir: \(directory))")
        }
        // RTLD_LOCAL: each plugin's symbols stay its own. Never dlclose: unloading Swift code is unsupported.
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw PluginError("plugin '\(name)' failed to load: \(why)")
        }
        guard let sym = dlsym(handle, NVR_PLUGIN_ENTRY_SYMBOL) else {
            throw PluginError("plugin '\(name)' (\(path)) has no \(NVR_PLUGIN_ENTRY_SYMBOL) symbol: not an NVR plugin")
        }
        let fn = unsafeBitCast(sym, to: nvr_plugin_entry_fn.self)
        guard let entry = fn() else { throw PluginError("plugin '\(name)': entry returned nothing") }
        let abi = entry.pointee.abi_version
        guard abi == NVR_PLUGIN_ABI_VERSION else {
            throw PluginError(
                "plugin '\(name)' speaks plugin ABI \(abi), this NVR speaks \(NVR_PLUGIN_ABI_VERSION): rebuild the plugin"
            )
        }
        // Fields appended later (card, control) may be missing from an older plugin: see `cardFunctions`.
        guard entry.pointee.struct_size >= UInt32(MemoryLayout<nvr_plugin_entry_v1>.offset(of: \.card)!) else {
            throw PluginError("plugin '\(name)': entry struct too small (\(entry.pointee.struct_size) bytes)")
        }
        guard entry.pointee.create != nil, entry.pointee.destroy != nil, entry.pointee.free_string != nil else {
            throw PluginError("plugin '\(name)': entry lacks create, destroy or free_string")
        }
        let declared = entry.pointee.name.map { String(cString: $0) } ?? ""
        guard declared == name else {
            throw PluginError("plugin file \(path) calls itself '\(declared)', expected '\(name)'")
        }
        return LoadedPlugin(
            name: name, version: entry.pointee.version.map { String(cString: $0) } ?? "?",
            description: entry.pointee.description.map { String(cString: $0) } ?? "",
            path: path, abiVersion: abi, capabilities: entry.pointee.capabilities, entry: entry)
    }
}
