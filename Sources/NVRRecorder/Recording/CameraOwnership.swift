/// Which cameras a recorder may record now: with several recorder nodes sharing one index,
/// those whose lease this node holds (design/scale-out.md). A recorder without one records
/// every enabled camera.
public protocol CameraOwnership: AnyObject, Sendable {
    func mayRecord(_ cameraID: Int64) -> Bool
}
