import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRPluginHost
import NVRStorage
import NVRTime

/// Camera management shared by the CLI and the API. Every change goes to the index and bumps
/// its cameras generation: a running `nvr serve` starts, restarts or stops the camera within
/// a second or two (Recorder.reconcile), whichever process made the change.
public struct CameraAdmin: Sendable {
    public let index: any IndexStore
    public let storage: StorageLayout
    public let plugins: PluginHost

    public init(index: any IndexStore, storage: StorageLayout, plugins: PluginHost) {
        self.index = index
        self.storage = storage
        self.plugins = plugins
    }

    /// What a change to a camera asks for; nil fields stay as they are.
    public struct Change: Sendable {
        public var name: String?
        public var url: String?
        /// Options to set; a nil value removes the option. The value "***" (what answers show
        /// for a secret) leaves a secret as it is, so a form can send back what it was given.
        public var options: [String: String?] = [:]
        public var enabled: Bool?
        public init(name: String? = nil, url: String? = nil, options: [String: String?] = [:], enabled: Bool? = nil) {
            self.name = name
            self.url = url
            self.options = options
            self.enabled = enabled
        }
    }

    /// Adds a camera after its plugin has accepted the config. A camera removed earlier with
    /// its recordings kept comes back, recordings included, when added under the same name.
    @discardableResult
    public func add(name: String, plugin: String, config: [String: String], enabled: Bool = true) throws -> CameraRecord
    {
        try Self.checkName(name)
        if let existing = try index.camera(named: name, includeRemoved: true), existing.removed90k == nil {
            throw Failure(.conflict, "a camera named '\(name)' already exists")
        }
        let json = try Self.json(config)
        try validate(plugin: plugin, configJSON: json)
        return try index.addCamera(
            CameraRecord(name: name, plugin: plugin, config: json, enabled: enabled, created90k: Time90k.now()))
    }

    /// Applies `change` to the camera `name` (its plugin checks the new config first).
    @discardableResult
    public func update(name: String, _ change: Change) throws -> CameraRecord {
        guard var cam = try index.camera(named: name) else {
            throw Failure(.notFound, "no camera named '\(name.prefix(64))'")
        }
        let stored = Self.dictionary(cam.config)
        var config = stored
        var sent: [String: String] = [:]
        if let url = change.url { sent["url"] = url }
        for (k, v) in change.options {
            guard !k.isEmpty else { throw Failure(.invalid, "an option needs a name") }
            if let v { sent[k] = v } else { config[k] = nil }
        }
        // "***" and a URL's ***@ (what forms are shown) keep the stored secrets, at the same
        // address only; a change of address must bring the secrets with it.
        config.merge(try Self.restoringSecrets(sent, stored: stored)) { _, new in new }
        try Self.checkSecretsFollow(
            from: stored, to: config, sent: Set(sent.filter { $0.value != "***" && !$0.value.contains("://***@") }.keys)
        )
        let json = try Self.json(config)
        if json != cam.config { try validate(plugin: cam.plugin, configJSON: json) }
        cam.config = json
        if let enabled = change.enabled { cam.enabled = enabled }
        if let newName = change.name, newName != cam.name {
            try Self.checkName(newName)
            if try index.camera(named: newName, includeRemoved: true) != nil {
                throw Failure(
                    .conflict,
                    "a camera named '\(newName)' already exists (or a removed one keeps its recordings under that name)"
                )
            }
            cam.name = newName
        }
        try index.updateCamera(cam)
        return cam
    }

    /// Removes a camera. With `deleteRecordings` its recordings go too (crash safe: mark rows,
    /// unlink files, drop rows) and the number deleted is returned; without, the camera stops
    /// and its recordings stay (playable, kept by retention's rules, back on its timeline if a
    /// camera of that name is added again).
    @discardableResult
    public func remove(name: String, deleteRecordings: Bool) throws -> Int {
        guard let cam = try index.camera(named: name), let id = cam.id else {
            throw Failure(.notFound, "no camera named '\(name.prefix(64))'")
        }
        guard deleteRecordings else {
            try index.retireCamera(id: id)
            return 0
        }
        let segs = try index.segments(cameraID: id)
        try SegmentDeleter(index: index, storage: storage).delete(segs)
        try index.removeCamera(id: id)
        try? FileManager.default.removeItem(atPath: storage.recordingsDir + "/" + name)
        return segs.count
    }

    /// Asks the plugin to create (and at once destroy) an instance: a bad config is refused here.
    public func validate(plugin name: String, configJSON: String) throws {
        do {
            let p = try plugins.plugin(named: name)
            _ = try PluginInstance(plugin: p, configJSON: configJSON, callbacks: SilentCallbacks())
        } catch let e as PluginError {
            throw Failure(.invalid, e.description)
        }
    }

    static func checkName(_ name: String) throws {
        guard StorageLayout.isValidCameraName(name) else {
            throw Failure(
                .invalid, "invalid camera name '\(name.prefix(64))': use letters, digits, '-', '_' and '.' (up to 64)")
        }
    }

    /// Why a change was refused, by kind (the API answers 404, 409 or 400).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public enum Kind: Sendable { case notFound, conflict, invalid }
        public let kind: Kind
        public let description: String
        init(_ kind: Kind, _ message: String) {
            self.kind = kind
            description = message
        }
    }

    /// A camera's config JSON as options (non-string values as their text).
    public static func dictionary(_ json: String) -> [String: String] {
        guard let obj = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else { return [:] }
        return obj.mapValues { "\($0)" }
    }

    static func json(_ config: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]), as: UTF8.self)
    }
}
