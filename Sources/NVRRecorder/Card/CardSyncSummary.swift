/// What one card sync did, as `nvr card sync --json` prints it and
/// `POST /api/cameras/{name}/card/sync` answers.
public struct CardSyncSummary: Encodable, Sendable {
    public var camera: String
    public var files: Int
    public var clockOffsetSeconds: Double?
    public var gaps: Int
    public var segments: Int
    public var backfilledSeconds: Double
    public var bytesRead: Int64
    public var errors: [String]
    /// What may make the result wrong without failing it (a camera that gave no clock).
    public var warnings: [String]

    public static let noClock = "camera gave no clock: card times taken as UTC"

    public init(camera: String, _ r: CardSync.Report) {
        self.camera = camera
        files = r.files
        clockOffsetSeconds = r.clockOffsetSeconds
        gaps = r.gaps
        segments = r.segments
        backfilledSeconds = Double(r.backfilled90k) / 90_000
        bytesRead = r.bytesFetched
        errors = r.errors
        warnings = r.clockOffsetSeconds == nil ? [Self.noClock] : []
    }
}
