import Foundation

/// One line of progress on a terminal, rewritten in place; silent otherwise (scripts, CI).
/// Counts ("deleting [####....] 40% (120/300)") or bytes with rate and time left ("writing
/// front.mp4: 45.2 MB of 120.0 MB (38%), 80.1 MB/s, 1 s left").
final class ProgressBar {
    private let label: String
    private let enabled = isatty(2) != 0
    private var last = -1
    private let started = Date()
    private var lastDrawn = Date.distantPast

    init(label: String) { self.label = label }

    func update(_ done: Int, _ total: Int) {
        guard enabled, total > 0 else { return }
        let pct = done * 100 / total
        guard pct != last else { return }
        last = pct
        let width = 30
        let filled = width * min(done, total) / total
        draw(
            "\(label) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(pct)% (\(done)/\(total))"
        )
    }

    /// Bytes so far, of `total` when known: at most a few redraws a second.
    func update(bytes done: Int64, of total: Int64?) {
        guard enabled else { return }
        let now = Date()
        let finished = total.map { done >= $0 } ?? false
        guard finished || now.timeIntervalSince(lastDrawn) >= 0.25 else { return }
        lastDrawn = now
        last = 0
        let seconds = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(done) / seconds
        var text = "\(label): \(formatBytes(done))"
        if let total, total > 0 {
            text += " of \(formatBytes(total)) (\(min(100, done * 100 / total))%)"
        }
        text += ", \(formatBytes(Int64(rate)))/s"
        if let total, total > done, rate > 0 { text += ", \(Self.describe(seconds: Double(total - done) / rate)) left" }
        draw(text)
    }

    private func draw(_ text: String) {
        // \u{1B}[K clears what a longer previous line left.
        FileHandle.standardError.write(Data("\r\(text)\u{1B}[K".utf8))
    }

    static func describe(seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        return s < 60 ? "\(s) s" : s < 3600 ? "\(s / 60) min \(s % 60) s" : "\(s / 3600) h \(s % 3600 / 60) min"
    }

    func finish() { if enabled && last >= 0 { FileHandle.standardError.write(Data("\n".utf8)) } }
}
