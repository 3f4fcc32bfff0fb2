import CNVRPlugin
import Foundation
import Synchronization

/// Why a plugin could not be used.
public struct PluginError: Error, CustomStringConvertible, Sendable {
    /// What the camera's status makes of it: `configuration` (a plugin that does not load, a
    /// config it refuses) and `unsupported` (a plugin asked for what it cannot do: live video
    /// from a card-only plugin, a card from one without) mark the camera *failed*, something
    /// for a person to fix; `transient` (the camera or its cloud failing to start a stream:
    /// unreachable, HTTP 500, busy) marks it *lost*, and it is retried the same way.
    public enum Kind: Sendable, Equatable { case configuration, unsupported, transient }
    public let description: String
    public let kind: Kind
    public init(_ m: String, kind: Kind = .configuration) {
        description = m
        self.kind = kind
    }
}
