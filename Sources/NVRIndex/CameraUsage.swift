import Foundation
import GRDB

/// Bytes and the oldest recording of one camera, by kind.
public struct CameraUsage: Sendable, Equatable {
    public var cameraID: Int64
    public var bytes: Int64
    public var oldest90k: Int64?
}
