/// Entry points for coverage-guided fuzzing: one function per parser that takes bytes from
/// outside (cameras, plugins, files, HTTP requests). Each must return for any input — no
/// trap, no unbounded loop or allocation — and checks what it can of its own results.
///
/// `make fuzz` builds them into one libFuzzer binary (Fuzz/Package.swift, NVR_FUZZ_TARGET
/// picks the target); the normal test suite replays every input kept under
/// Tests/Fixtures/fuzz/<target>/ through the same functions, so a crash found once stays fixed.
public enum FuzzTargets {
    public typealias Target = @Sendable (UnsafeRawBufferPointer) -> Void

    /// Every target by name.
    public static let all: [String: Target] = [
        "rtsp-session": rtspSession,
        "rtsp-backchannel": rtspBackChannel,
        "sdp": sdp,
        "sps": sps,
        "rtp-depacketizer": rtpDepacketizer,
        "rtsp-auth": rtspAuth,
        "segment-file": segmentFile,
        "mp4-boxes": mp4Boxes,
        "frame-index": frameIndex,
        "http-query": httpQuery,
        "plugin-json": pluginJSON,
        "gopro-json": goproJSON,
        "osc-json": oscJSON,
        "mp4-header": mp4Header,
        "tuya-lan": tuyaLAN,
        "http-response": httpResponse,
        "http-request": httpRequest,
    ]

    public static var names: [String] { all.keys.sorted() }

    /// Splits fuzz input into pieces at a separator byte sequence (inputs that need several
    /// strings or packets): the fuzzer learns the separator from the seeds.
    static func pieces(_ data: UnsafeRawBufferPointer, separator: [UInt8] = Array("\n--\n".utf8), max: Int = 64)
        -> [[UInt8]]
    {
        var out: [[UInt8]] = []
        let bytes = Array(data)
        var start = 0
        var i = 0
        while i + separator.count <= bytes.count, out.count < max - 1 {
            if bytes[i..<(i + separator.count)].elementsEqual(separator) {
                out.append(Array(bytes[start..<i]))
                i += separator.count
                start = i
            } else {
                i += 1
            }
        }
        out.append(Array(bytes[start...]))
        return out
    }

    static func text(_ b: [UInt8]) -> String { String(decoding: b, as: UTF8.self) }
}
