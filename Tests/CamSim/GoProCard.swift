import Foundation

/// The simulated GoPro's SD card: a folder of real MP4s (`DCIM/100GOPRO/…`), plus, while the
/// camera "records", chapters written live by the same ffmpeg that feeds the preview stream
/// (MPEG-TS to the radio, MP4 chapters to the card). So the card keeps recording when the
/// Wi-Fi drops, and its footage matches what the stream showed. With a preview size of its
/// own, the preview is scaled and encoded apart from the card, as on a real GoPro (a 480p or
/// 720p preview of a 1080p+ recording): other parameter sets on each side of every seam.
final class GoProCard: @unchecked Sendable {
    // @unchecked Sendable: `probed` and `encoder` are guarded by `lock`; the rest is immutable.
    struct File: Sendable {
        var directory: String
        var name: String
        /// Camera-local epoch seconds (the camera's clock as if UTC).
        var created: Int64
        var duration: Double
        var size: Int64
        var width: Int, height: Int, fps: Int
        var path: String { directory + "/" + name }
    }

    let root: String
    let directory = "100GOPRO"
    /// Camera clock minus UTC, seconds (time zone plus drift).
    let clockOffset: Double
    let chapterSeconds: Int
    let size: (width: Int, height: Int)
    /// The preview stream's size when it is not the card's.
    let previewSize: (width: Int, height: Int)?
    let fps: Int
    private let lock = NSLock()
    private var encoder: Process?
    private var recordingStart: Date?
    private var recordingID = 1
    private var probed: [String: (mtime: Date, duration: Double)] = [:]
    private var listPath: String { root + "/chapters.csv" }
    private var stopPath: String { root + "/encoder.stop" }

    var folder: String { root + "/DCIM/" + directory }

    init(
        root: String, clockOffset: Double, chapterSeconds: Int, width: Int, height: Int, fps: Int,
        previewSize: (width: Int, height: Int)? = nil
    ) throws {
        self.root = root
        self.clockOffset = clockOffset
        self.chapterSeconds = chapterSeconds
        self.size = (width, height)
        self.previewSize = previewSize
        self.fps = fps
        try FileManager.default.createDirectory(atPath: root + "/DCIM/" + directory, withIntermediateDirectories: true)
    }

    /// The camera's clock now: local wall time as epoch seconds.
    func localNow() -> Double { Date().timeIntervalSince1970 + clockOffset }

    var isRecording: Bool { lock.withLock { encoder?.isRunning ?? false } }

    /// Starts the encoder: the preview stream to `udpPort` and, when `toCard`, chapters
    /// `GH<chapter>NNNN.MP4` on the card. `recording` is the media id for the chapters.
    func startEncoder(udpPort: Int, toCard: Bool, recording: Int) throws {
        let ts = "[f=mpegts]udp://127.0.0.1:\(udpPort)?pkt_size=1316"
        let mp4 =
            "[f=segment:segment_time=\(chapterSeconds):segment_format=mp4:segment_list=\(listPath):segment_list_type=csv:reset_timestamps=1:segment_start_number=1]"
            + "\(folder)/GH%02d\(String(format: "%04d", recording)).MP4"
        let p = Process()
        // Through a small shell that also stops ffmpeg when this process goes away (a crashed
        // test must not leave an encoder writing to the card folder).
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Stopped through a file, not a signal: children of a test process may inherit
        // blocked SIGINT/SIGTERM, so the last resort is SIGKILL.
        let watchdog = """
            /usr/bin/ffmpeg "$@" & f=$!
            alive() { [ -e /proc/$1 ] && ! grep -q '^State:.*Z' /proc/$1/status; }
            while alive \(ProcessInfo.processInfo.processIdentifier) && alive $f && [ ! -e '\(stopPath)' ]; do sleep 0.2; done
            kill -TERM $f 2>/dev/null
            for i in 1 2 3 4 5 6 7 8 9 10; do alive $f || break; sleep 0.2; done
            kill -KILL $f 2>/dev/null; wait $f
            """
        let x264 = [
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "\(fps / 2)",
            "-keyint_min", "\(fps / 2)", "-sc_threshold", "0", "-bf", "0", "-pix_fmt", "yuv420p",
        ]
        var outputs: [String]
        if let preview = previewSize {
            // Two encoders from one picture: the card's at full size, the preview scaled.
            outputs =
                [
                    "-filter_complex", "[0:v]split=2[card][p];[p]scale=\(preview.width):\(preview.height)[preview]",
                    "-map", "[preview]",
                ] + x264 + ["-f", "mpegts", "udp://127.0.0.1:\(udpPort)?pkt_size=1316"]
            if toCard {
                outputs +=
                    ["-map", "[card]"] + x264 + [
                        "-f", "segment", "-segment_time", "\(chapterSeconds)", "-segment_format", "mp4",
                        "-segment_list", listPath, "-segment_list_type", "csv", "-reset_timestamps", "1",
                        "-segment_start_number", "1", "\(folder)/GH%02d\(String(format: "%04d", recording)).MP4",
                    ]
            } else {
                outputs += ["-map", "[card]", "-f", "null", "-"]
            }
        } else {
            outputs = x264 + ["-map", "0:v", "-f", "tee", toCard ? ts + "|" + mp4 : ts]
        }
        p.arguments =
            [
                "-c", watchdog, "sh", "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-f", "lavfi",
                "-i", "testsrc2=size=\(size.width)x\(size.height):rate=\(fps)",
            ] + outputs
        p.standardInput = FileHandle.nullDevice
        // Never the test's own pipes: a child holding them open keeps `swift test` waiting.
        p.standardOutput = FileHandle.nullDevice
        FileManager.default.createFile(atPath: root + "/encoder.log", contents: nil)
        p.standardError = FileHandle(forWritingAtPath: root + "/encoder.log") ?? FileHandle.nullDevice
        try? FileManager.default.removeItem(atPath: listPath)
        try? FileManager.default.removeItem(atPath: stopPath)
        try p.run()
        lock.withLock {
            encoder = p
            recordingStart = toCard ? Date() : nil
            recordingID = recording
        }
    }

    /// When the recording's first frame left the encoder (the relay tells us), for chapter times.
    func anchor(firstFrame: Date) {
        lock.withLock { if recordingStart != nil { recordingStart = firstFrame } }
    }

    func stopEncoder() {
        let p = lock.withLock { () -> Process? in
            let p = encoder
            encoder = nil
            return p
        }
        guard let p, p.isRunning else { return }
        FileManager.default.createFile(atPath: stopPath, contents: nil)  // ffmpeg finishes the open chapter
        let deadline = Date(timeIntervalSinceNow: 5)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    }

    /// Complete files on the card: chapters the encoder has closed, and any other MP4 in the
    /// folder (their span ends at the file's modification time).
    func files() -> [File] {
        let fm = FileManager.default
        let names = ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.uppercased().hasSuffix(".MP4") }
            .sorted()
        var chapters: [String: (start: Double, end: Double)] = [:]
        if let text = try? String(contentsOfFile: listPath, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let f = line.split(separator: ",")
                if f.count == 3, let a = Double(f[1]), let b = Double(f[2]) { chapters[String(f[0])] = (a, b) }
            }
        }
        let (start, recording) = lock.withLock {
            (recordingStart, recordingStart != nil && (encoder?.isRunning ?? false))
        }
        var out: [File] = []
        for name in names {
            let path = folder + "/" + name
            guard let attrs = try? fm.attributesOfItem(atPath: path), let size = attrs[.size] as? Int64,
                let mtime = attrs[.modificationDate] as? Date
            else { continue }
            if let c = chapters[name], let start {
                let created = start.timeIntervalSince1970 + c.start + clockOffset
                out.append(
                    File(
                        directory: directory, name: name, created: Int64(created.rounded(.down)),
                        duration: c.end - c.start,
                        size: size, width: self.size.width, height: self.size.height, fps: fps))
            } else if recording, name.hasPrefix("GH"), name.hasSuffix(String(format: "%04d.MP4", recordingID)) {
                continue  // the chapter being written: not on the list until it is closed
            } else if let d = duration(path, mtime: mtime) {
                let created = mtime.timeIntervalSince1970 - d + clockOffset
                out.append(
                    File(
                        directory: directory, name: name, created: Int64(created.rounded(.down)), duration: d,
                        size: size, width: self.size.width, height: self.size.height, fps: fps))
            }
        }
        return out
    }

    private func duration(_ path: String, mtime: Date) -> Double? {
        if let p = lock.withLock({ probed[path] }), p.mtime == mtime { return p.duration }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        p.arguments = ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard let d = Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        lock.withLock { probed[path] = (mtime, d) }
        return d
    }
}
