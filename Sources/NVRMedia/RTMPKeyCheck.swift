import CFFmpeg
import Foundation
import NVRTime

/// Makes the RTMP listener's stream key count. libavformat accepts a push to any key and only
/// logs "Unexpected stream …, expecting …"; a log hook catches that message, on the thread
/// that is inside avformat_open_input, and refuses the push through that open's interrupter.
enum RTMPKeyCheck {
    private static let installed: Bool = {
        nvr_install_log_hook { pushed in
            // Only the thread inside an RTMP listener's open has an interrupter here.
            guard let interrupter = Thread.current.threadDictionary[key] as? Interrupter else { return }
            let p = pushed.map { String(cString: $0) } ?? "?"
            interrupter.refuse("refused a push with the wrong stream key '\(p.prefix(64))'")
        }
        return true
    }()
    private static let key = "nvr.rtmp-key-check"

    static func begin(_ interrupter: Interrupter) {
        _ = installed
        Thread.current.threadDictionary[key] = interrupter
    }

    static func end() { Thread.current.threadDictionary.removeObject(forKey: key) }
}
