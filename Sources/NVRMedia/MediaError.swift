import CFFmpeg

/// An error from the media layer, with a message a person can act on.
public struct MediaError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        case open, read, write, codec, unsupported, corrupt, interrupted, timeout, noSpace
    }
    public let kind: Kind
    public let message: String
    /// The libav or errno code behind it, when there is one.
    public let code: Int32

    public init(_ kind: Kind, _ message: String, code: Int32 = 0) {
        self.kind = kind
        self.message = message
        self.code = code
    }

    public var description: String { message }

    /// The input ended (a file read to its end), as opposed to failing.
    public var isEndOfFile: Bool { code == nvr_averror_eof() }

    /// Describes a libav error code, e.g. "Server returned 401 Unauthorized (authorization failed)".
    public static func avErrorString(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buf, buf.count)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func av(_ kind: Kind, _ what: String, _ code: Int32) -> MediaError {
        if code == nvr_averror_exit() { return MediaError(.interrupted, "\(what): interrupted", code: code) }
        if code == nvr_averror(ETIMEDOUT) { return MediaError(.timeout, "\(what): timed out", code: code) }
        return MediaError(kind, "\(what): \(avErrorString(code))", code: code)
    }
}
