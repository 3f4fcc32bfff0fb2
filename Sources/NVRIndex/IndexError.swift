import Foundation
import GRDB

/// An index error with a message a person can act on.
public struct IndexError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// The index could not be reached or was busy (a PostgreSQL server restarting, a network
    /// cut): the same write may go in later.
    public let retryable: Bool
    /// The index's disk is full.
    public let diskFull: Bool
    public init(_ message: String, retryable: Bool = false, diskFull: Bool = false) {
        description = message
        self.retryable = retryable || diskFull
        self.diskFull = diskFull
    }

    /// True when SQLite could not write because the disk (or its quota) is full: the recorder
    /// treats it like ENOSPC on a segment file.
    /// True when the write may go in if tried again later: the disk is full, another
    /// connection held the lock past the busy timeout, or an I/O error. (Not a constraint or
    /// a row gone: trying again cannot help those.)
    public static func isRetryable(_ error: any Error) -> Bool {
        if let e = error as? IndexError { return e.retryable }
        guard let e = error as? DatabaseError else { return false }
        return [.SQLITE_FULL, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PROTOCOL].contains(
            e.resultCode)
    }

    public static func isDiskFull(_ error: any Error) -> Bool {
        if let e = error as? IndexError { return e.diskFull }
        guard let e = error as? DatabaseError else { return false }
        return e.resultCode == .SQLITE_FULL
    }
}
