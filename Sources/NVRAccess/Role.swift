/// What a user may do. `admin`: everything; `viewer`: watch (live, recordings, events,
/// snapshots, exports) the cameras it is given, change nothing.
public enum Role: String, Sendable, Codable, CaseIterable {
    case admin, viewer
}
