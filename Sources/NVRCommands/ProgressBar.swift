import Foundation

/// A one-line progress bar on a terminal; silent otherwise (scripts, CI).
final class ProgressBar {
    private let label: String
    private let enabled = isatty(2) != 0
    private var last = -1

    init(label: String) { self.label = label }

    func update(_ done: Int, _ total: Int) {
        guard enabled, total > 0 else { return }
        let pct = done * 100 / total
        guard pct != last else { return }
        last = pct
        let width = 30, filled = width * done / total
        FileHandle.standardError.write(Data("\r\(label) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(pct)% (\(done)/\(total))".utf8))
    }

    func finish() { if enabled && last >= 0 { FileHandle.standardError.write(Data("\n".utf8)) } }
}
