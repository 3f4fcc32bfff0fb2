import Foundation
import NVRTime

// The index as protocols, one per area: what a backend implements (SQLite: IndexDatabase; a
// second one, PostgreSQL, is the multi-node issue's), and what each part of the NVR holds
// (`any IndexStore`, or just the area it needs). Each requirement is implemented, and
// documented, in IndexDatabase's extension of the same area (IndexDatabase+Cameras.swift…).

/// Users, login sessions, API tokens and the audit log.
public protocol AccessStore: Sendable {
    func users() throws -> [UserRecord]
    func user(named name: String) throws -> UserRecord?
    func user(id: Int64) throws -> UserRecord?
    func userCount() throws -> Int
    @discardableResult func addUser(_ user: UserRecord) throws -> UserRecord
    func updateUser(_ user: UserRecord) throws
    func removeUser(id: Int64) throws
    func addSession(_ session: SessionRecord) throws -> SessionRecord
    func session(tokenHash: Data, at now: Int64) throws -> (SessionRecord, UserRecord)?
    func touchSession(id: Int64, at now: Int64, expires90k: Int64) throws
    func sessions(userID: Int64?) throws -> [SessionRecord]
    func removeSession(id: Int64) throws
    func removeSessions(userID: Int64) throws -> Int
    @discardableResult func removeExpiredSessions(at now: Int64) throws -> Int
    func addToken(_ token: APITokenRecord) throws -> APITokenRecord
    func token(hash: Data) throws -> (APITokenRecord, UserRecord)?
    func touchToken(id: Int64, at now: Int64) throws
    func tokens(userID: Int64?) throws -> [APITokenRecord]
    func removeToken(id: Int64) throws -> Bool
    func addAudit(_ entry: AuditRecord) throws
    func audit(limit: Int, before: Int64?) throws -> [AuditRecord]
}

/// The review queue's reviewed flags, per user (IndexDatabase+Review.swift).
public protocol ReviewStore: Sendable {
    func reviewedEvents(user: String, among eventIDs: [Int64]) throws -> Set<Int64>
    func markReviewed(user: String, eventIDs: [Int64], at t: Int64) throws
    func reviewedUntil(user: String) throws -> Int64?
    func setReviewedUntil(user: String, _ t: Int64) throws
}

/// Cameras, their recording settings and their last known state.
public protocol CameraStore: Sendable {
    @discardableResult func addCamera(_ camera: CameraRecord) throws -> CameraRecord
    func updateCamera(_ camera: CameraRecord) throws
    func cameras(includeRemoved: Bool) throws -> [CameraRecord]
    func camera(named name: String, includeRemoved: Bool) throws -> CameraRecord?
    func removeCamera(id: Int64) throws
    func retireCamera(id: Int64, at time90k: Int64) throws
    func camerasGeneration() throws -> Int64
    func cameraState(cameraID: Int64) throws -> CameraStateRecord?
}

/// What each camera's memory card holds, and what was copied from it.
public protocol CardStore: Sendable {
    func replaceCardSlices(cameraID: Int64, with slices: [CardSliceRecord]) throws
    func cardSlices(cameraID: Int64, start90k: Int64, end90k: Int64, includeOffTimeline: Bool) throws
        -> [CardSliceRecord]
    func setPluginStatus(cameraID: Int64, json: String, at time90k: Int64) throws
    func pluginStatus(cameraID: Int64) throws -> (json: String, updated90k: Int64)?
}

/// Kept clips: ranges retention never deletes.
public protocol ClipStore: Sendable {
    @discardableResult func addProtectedClip(_ clip: ProtectedClipRecord) throws -> ProtectedClipRecord
    func protectedClips(cameraID: Int64?) throws -> [ProtectedClipRecord]
    func protectedClip(id: Int64) throws -> ProtectedClipRecord?
    func removeProtectedClip(id: Int64) throws -> Bool
    func isProtected(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> Bool
}

/// What was deleted, when and why.
public protocol DeletionLog: Sendable {
    func recordDeleted(cameraID: Int64, _ range: Range<Int64>, reason: String, now: Int64) throws
    func deletedRanges(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [Range<Int64>]
}

/// Events (motion, the camera's own) and their marks on segments.
public protocol EventStore: Sendable {
    func recordingSettings(cameraID: Int64) throws -> CameraRecordingRecord
    func setRecordingSettings(_ r: CameraRecordingRecord) throws
    func insertEvent(_ e: EventRecord) throws -> EventRecord
    func event(id: Int64) throws -> EventRecord?
    func events(cameraID: Int64?, start90k: Int64, end90k: Int64, type: String?, limit: Int) throws -> [EventRecord]
    func events(cameraID: Int64?, start90k: Int64, end90k: Int64, type: String?, zone: String?, limit: Int) throws
        -> [EventRecord]
    @discardableResult func closeOpenEvents() throws -> Int
    func deleteEvent(id: Int64) throws -> Bool
    func deleteEvents(cameraID: Int64, clipEndingBefore t: Int64?) throws -> Int
}

/// Retention limits and settings, and the segments they may delete.
public protocol RetentionStore: Sendable {
    func retention(cameraID: Int64) throws -> CameraRetention?
    func setRetention(_ r: CameraRetention) throws
    func setting(_ key: String) throws -> String?
    func setSetting(_ key: String, _ value: String?) throws
    /// Settings (nil deletes one) and cameras' limits saved together or not at all: once a
    /// read sees any of one change, later reads see all of it.
    func saveRetention(settings: [(key: String, value: String?)], cameras: [CameraRetention]) throws
    func deletionCandidates(cameraID: Int64?, olderThan end90k: Int64, hasEvent: Bool?, limit: Int) throws
        -> [SegmentRecord]
    func bytesByCamera() throws -> [Int64: Int64]
    func markEvent(segmentID: Int64, _ hasEvent: Bool) throws
    func oldestSegments(cameraID: Int64, limit: Int) throws -> [SegmentRecord]
}

/// Segments, their frames, runs and sample entries; storage sums.
public protocol SegmentStore: Sendable {
    func sampleEntryID(_ entry: SampleEntryRecord) throws -> Int64
    func sampleEntry(id: Int64) throws -> SampleEntryRecord?
    func insertSegment(_ segment: SegmentRecord) throws -> SegmentRecord
    func completeSegment(_ segment: SegmentRecord, frames: SegmentFramesRecord) throws
    func segments(state: SegmentRecord.State) throws -> [SegmentRecord]
    func segments(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [SegmentRecord]
    func timelineSpans(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [SegmentSpan]
    func newestSegments(cameraID: Int64, limit: Int) throws -> [SegmentRecord]
    func newestLiveStart(cameraID: Int64) throws -> Int64?
    func hasSegment(path: String) throws -> Bool
    /// The id of the segment row with this path (the node's own, on PostgreSQL), if any.
    func segmentID(path: String) throws -> Int64?
    /// The camera of the segment row with this id (any node's), if there is one.
    func cameraID(segmentID: Int64) throws -> Int64?
    func frames(segmentID: Int64) throws -> SegmentFramesRecord?
    func storageSummary(cameraID: Int64) throws -> CameraStorageSummary
    func markDeleting(segmentIDs: [Int64]) throws
    func removeSegments(ids: [Int64]) throws
    func hasRecordings(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> Bool
    func allSegments() throws -> [SegmentRecord]
    func markWriting(segmentID: Int64) throws
}

/// The whole index: every area, and the recording path's writes.
public protocol IndexStore: RecordingStore, AccessStore, CameraStore, CardStore, ClipStore, DeletionLog, EventStore,
    ReviewStore,
    RetentionStore, SegmentStore
{}

extension IndexDatabase: IndexStore {}

// The arguments callers may leave out, as IndexDatabase's own methods let them.
extension AccessStore {
    public func sessions() throws -> [SessionRecord] { try sessions(userID: nil) }
    public func tokens() throws -> [APITokenRecord] { try tokens(userID: nil) }
    public func audit(limit: Int) throws -> [AuditRecord] { try audit(limit: limit, before: nil) }
}

extension CameraStore {
    public func cameras() throws -> [CameraRecord] { try cameras(includeRemoved: false) }
    public func camera(named name: String) throws -> CameraRecord? { try camera(named: name, includeRemoved: false) }
    public func retireCamera(id: Int64) throws { try retireCamera(id: id, at: Time90k.now()) }
}

extension CardStore {
    public func cardSlices(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [CardSliceRecord] {
        try cardSlices(cameraID: cameraID, start90k: start90k, end90k: end90k, includeOffTimeline: false)
    }
}

extension ClipStore {
    public func protectedClips() throws -> [ProtectedClipRecord] { try protectedClips(cameraID: nil) }
}

extension DeletionLog {
    public func recordDeleted(cameraID: Int64, _ range: Range<Int64>, reason: String) throws {
        try recordDeleted(cameraID: cameraID, range, reason: reason, now: Time90k.now())
    }
}

extension EventStore {
    public func events(cameraID: Int64?, start90k: Int64, end90k: Int64, type: String? = nil) throws -> [EventRecord] {
        try events(cameraID: cameraID, start90k: start90k, end90k: end90k, type: type, limit: 1000)
    }
    public func events(cameraID: Int64?, start90k: Int64, end90k: Int64, limit: Int) throws -> [EventRecord] {
        try events(cameraID: cameraID, start90k: start90k, end90k: end90k, type: nil, limit: limit)
    }
}

extension RetentionStore {
    public func deletionCandidates(cameraID: Int64?, olderThan end90k: Int64 = .max, limit: Int) throws
        -> [SegmentRecord]
    {
        try deletionCandidates(cameraID: cameraID, olderThan: end90k, hasEvent: nil, limit: limit)
    }
    public func deletionCandidates(cameraID: Int64?, hasEvent: Bool?, limit: Int) throws -> [SegmentRecord] {
        try deletionCandidates(cameraID: cameraID, olderThan: .max, hasEvent: hasEvent, limit: limit)
    }
    public func markEvent(segmentID: Int64) throws { try markEvent(segmentID: segmentID, true) }
}

extension SegmentStore {
    public func segments(cameraID: Int64, start90k: Int64 = .min) throws -> [SegmentRecord] {
        try segments(cameraID: cameraID, start90k: start90k, end90k: .max)
    }
    public func segments(cameraID: Int64, end90k: Int64) throws -> [SegmentRecord] {
        try segments(cameraID: cameraID, start90k: .min, end90k: end90k)
    }
}
