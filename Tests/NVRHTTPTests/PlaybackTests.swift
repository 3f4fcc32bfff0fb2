import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRTime
import TestSupport
import Testing

/// view.mp4, snapshots and thumbnails over HTTP, on a camera recorded for real (GStreamer RTSP
/// server → recorder → index), with a reconnect gap in the middle.
@Suite(.serialized, .tags(.system)) struct PlaybackTests {
    @Test func viewMP4AcrossSegmentsAndAReconnectGapAndSnapshots() async throws {
        var o = RTSPCameraFixture.Options()
        o.audio = true
        o.gopSeconds = 1
        o.pattern = "ball"  // every frame differs, so comparing frames proves which one it is
        let cam = try RTSPCameraFixture(o)
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("cam", ["url": cam.url])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 30) { ((try? h.completeSegments("cam").count) ?? 0) >= 3 })
        // The camera drops for a few seconds, then comes back: a reconnect gap.
        cam.stop()
        try await Task.sleep(for: .seconds(3))
        try cam.start()
        let before = try h.completeSegments("cam").count
        #expect(TestEnvironment.wait(timeout: 30) { ((try? h.completeSegments("cam").count) ?? 0) >= before + 3 })
        h.recorder.stop()
        let segs = try h.completeSegments("cam")
        let runs = Set(segs.map(\.runID))
        #expect(runs.count == 2, "one reconnect: two runs")

        let server = try await TestServer(index: h.index, storage: h.recorder.storage)
        // Start on a frame between key frames of the first segment; end on a frame of the last.
        let first = try SegmentMedia.load(segs[0], index: h.index, storage: h.recorder.storage, audioTimescale: nil)
        let startFrame = try #require(first.video.indices.first { $0 > 0 && !first.video[$0].isKey && $0 >= 5 })
        let start = first.videoTimes[startFrame]
        let lastSeg = segs[segs.count - 1]
        let last = try SegmentMedia.load(lastSeg, index: h.index, storage: h.recorder.storage, audioTimescale: nil)
        let end = last.videoTimes[last.video.count / 2]
        #expect(segs.filter { $0.start90k < end && $0.end90k > start }.count >= 4)

        // start in 90 kHz ticks (exact), end in RFC 3339 (millisecond precision is fine there).
        let url = "/api/cameras/cam/view.mp4?start=\(start)&end=\(Time90k.rfc3339(end))"
        let endAsked = try #require(Time90k.parse(Time90k.rfc3339(end)))
        let full = try await server.get(url)
        #expect(full.status == 200)
        #expect(full.header("Content-Type") == "video/mp4")
        #expect(full.header("Accept-Ranges") == "bytes")
        #expect(Int(full.header("Content-Length") ?? "") == full.body.count)
        let etag = try #require(full.header("ETag"))
        let gaps = try #require(full.header("X-Recording-Gaps"), "the reconnect gap is reported")
        #expect(gaps.split(separator: ",").count == 1)
        let file = h.root + "/view.mp4"
        try full.body.write(to: URL(fileURLWithPath: file))

        // Duration: the request (the gap holds the last picture, so the file keeps the wall clock).
        let probe = try runProcess(
            "/usr/bin/ffprobe",
            ["-v", "error", "-show_entries", "format=duration:stream=codec_name,nb_frames", "-of", "json", file])
        let pj = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as! [String: Any]
        let duration = Double((pj["format"] as! [String: Any])["duration"] as! String)!
        let wanted = Double(endAsked - start) / 90_000
        #expect(abs(duration - wanted) <= 1.0 / 15 + 0.001, "ffprobe \(duration) s for \(wanted) s")
        // Frames: exactly the index's, from the key frame before start to the last frame before end.
        var expected = 0
        for s in segs where s.start90k < endAsked && s.end90k > start {
            let m = try SegmentMedia.load(s, index: h.index, storage: h.recorder.storage, audioTimescale: nil)
            let from = s.id == segs[0].id ? m.keyFrame(before: startFrame) : 0
            expected += m.videoTimes.indices.filter { $0 >= from && m.videoTimes[$0] < endAsked }.count
        }
        let streams = pj["streams"] as! [[String: Any]]
        #expect(streams.map { $0["codec_name"] as? String } == ["h264", "aac"])
        #expect(Int(streams[0]["nb_frames"] as? String ?? "") == expected)
        let errors = try decodeErrors(file)
        #expect(errors.isEmpty, "\(errors)")

        // The first picture shown is the frame at `start`: decoded from view.mp4 (edit list
        // honoured) and from the segment file at that time, the pictures are bit-identical.
        let shown = try runProcess("/usr/bin/ffmpeg", ["-v", "error", "-i", file, "-frames:v", "1", "-f", "md5", "-"])
        let offset = String(format: "%.4f", Double(start - segs[0].start90k) / 90_000 - 0.002)
        let truth = try runProcess(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-ss", offset, "-i", h.path(segs[0]), "-frames:v", "1", "-f", "md5", "-"])
        let after = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-ss",
                String(format: "%.4f", Double(first.videoTimes[startFrame + 1] - segs[0].start90k) / 90_000 - 0.002),
                "-i", h.path(segs[0]), "-frames:v", "1", "-f", "md5", "-",
            ])
        #expect(
            !shown.stdout.isEmpty && shown.stdout == truth.stdout,
            "first shown \(shown.stdout) vs frame at start \(truth.stdout)")
        #expect(truth.stdout != after.stdout, "neighbouring frames differ (else the check proves nothing)")

        // Range windows are the same bytes as the whole body.
        var rng = SystemRandomNumberGenerator()
        let size = full.body.count
        for _ in 0..<12 {
            let a = Int.random(in: 0..<size, using: &rng)
            let b = min(size - 1, a + Int.random(in: 0..<300_000, using: &rng))
            let part = try await server.get(url, headers: ["Range": "bytes=\(a)-\(b)"])
            #expect(part.status == 206)
            #expect(part.header("Content-Range") == "bytes \(a)-\(b)/\(size)")
            #expect(part.body == full.body[a...b])
        }
        let suffix = try await server.get(url, headers: ["Range": "bytes=-1000"])
        #expect(suffix.status == 206 && suffix.body == full.body.suffix(1000))
        let bad = try await server.get(url, headers: ["Range": "bytes=\(size)-"])
        #expect(bad.status == 416 && bad.header("Content-Range") == "bytes */\(size)")
        let stale = try await server.get(url, headers: ["Range": "bytes=0-9", "If-Range": "\"other\""])
        #expect(stale.status == 200 && stale.body.count == size)
        let head = try await server.get(url, method: "HEAD")
        #expect(head.status == 200 && head.header("ETag") == etag && head.body.isEmpty)

        // Snapshots: newest key frame at the asked width; `at` gives the frame nearest that time.
        let latest = try await server.get("/api/cameras/cam/snapshot.jpg?width=320")
        #expect(latest.status == 200)
        #expect(latest.header("Content-Type") == "image/jpeg")
        #expect(try jpegSize(latest.body, in: h.root) == "320x180")
        let t = first.videoTimes[startFrame] + 1_000
        let at = try await server.get("/api/cameras/cam/snapshot.jpg?at=\(t)")
        #expect(at.status == 200)
        #expect(Int64(at.header("X-Frame-Time90k") ?? "") == first.videoTimes[startFrame])
        #expect(try jpegSize(at.body, in: h.root) == "640x360")
        // …and it is that frame: closer to it than to its neighbour.
        let exact = h.root + "/exact.png"
        let next = h.root + "/next.png"
        let shot = h.root + "/shot.jpg"
        try at.body.write(to: URL(fileURLWithPath: shot))
        _ = try runProcess(
            "/usr/bin/ffmpeg", ["-v", "error", "-y", "-ss", offset, "-i", h.path(segs[0]), "-frames:v", "1", exact])
        _ = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-y", "-ss",
                String(format: "%.4f", Double(first.videoTimes[startFrame + 2] - segs[0].start90k) / 90_000 - 0.002),
                "-i", h.path(segs[0]), "-frames:v", "1", next,
            ])
        let good = try psnr(shot, exact)
        let worse = try psnr(shot, next)
        #expect(good > worse + 1, "PSNR \(good) dB against the frame at `at`, \(worse) dB against a later one")
        let gapTime = Int64(gaps.split(separator: "-")[0])! + 90_000
        let inGap = try await server.get("/api/cameras/cam/snapshot.jpg?at=\(gapTime)")
        #expect(inGap.status == 404 && inGap.json["error"] as? String == "nothing_recorded")

        // Thumbnails: N evenly spaced URLs that each answer with a picture.
        let thumbs = try await server.get("/api/cameras/cam/thumbnails?start=\(start)&end=\(end)&count=5&width=160")
        let list = try #require(thumbs.json["thumbnails"] as? [[String: Any]])
        #expect(list.count == 5)
        for th in list where th["recorded"] as? Bool == true {
            let img = try await server.get(th["url"] as! String)
            #expect(img.status == 200)
            #expect(try jpegSize(img.body, in: h.root) == "160x90")
        }

        // Timeline and recordings agree with the index.
        let tl = try await server.get("/api/cameras/cam/timeline?start=\(segs[0].start90k)&end=\(lastSeg.end90k)")
        let slices = try #require(tl.json["slices"] as? [[String: Any]])
        #expect(slices.count == 2, "two slices around the reconnect gap")
        #expect(slices.allSatisfy { $0["source"] as? String == "disk" && $0["kind"] as? String == "continuous" })
        let recs = try await server.get("/api/cameras/cam/recordings?start=\(segs[0].start90k)&end=\(lastSeg.end90k)")
        #expect((recs.json["recordings"] as? [[String: Any]])?.count == segs.count)
        let one = try await server.get("/api/cameras/cam")
        #expect(one.json["segments"] as? Int == segs.count)
        #expect((one.json["video"] as? [String: Any])?["width"] as? Int == 640)
    }

    /// A camera's picture changes size between recordings (a GoPro's preview and its card, a
    /// camera reconfigured): view.mp4 across the change is one file that ffmpeg decodes without
    /// a word and Chromium plays through, showing each size in turn.
    @Test func viewMP4PlaysThroughAChangeOfResolution() async throws {
        var o = RTSPCameraFixture.Options()
        o.width = 854
        o.height = 480
        let small = try RTSPCameraFixture(o)
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("cam", ["url": small.url])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 30) { ((try? h.completeSegments("cam").count) ?? 0) >= 2 })
        small.stop()
        // The new size's parameter sets only in the SDP, as in a camera's card files: a player
        // that keeps the first sample entry learns them from the key frame after the change.
        o.width = 1920
        o.height = 1080
        o.kbps = 2000
        o.extraArguments = ["--config-interval", "0"]
        let large = try RTSPCameraFixture(o, port: small.port)
        let before = try h.completeSegments("cam").count
        #expect(TestEnvironment.wait(timeout: 30) { ((try? h.completeSegments("cam").count) ?? 0) >= before + 2 })
        large.stop()
        // Then H.265, which no player switches to within one track: the file ends there.
        o.codec = "h265"
        o.width = 640
        o.height = 360
        o.kbps = 800
        o.extraArguments = []
        let hevc = try RTSPCameraFixture(o, port: small.port)
        // Waited for by codec, not by count: the 1080p camera's last segment may complete after
        // this camera starts (its end is noticed when its connection drops).
        let isHEVC = { (s: SegmentRecord) in ((try? h.index.sampleEntry(id: s.videoEntryID))??.codec) == "h265" }
        #expect(TestEnvironment.wait(timeout: 30) { ((try? h.completeSegments("cam")) ?? []).contains(where: isHEVC) })
        h.recorder.stop()
        hevc.stop()
        let all = try h.completeSegments("cam")
        let firstHEVC = try #require(
            all.firstIndex {
                $0.videoEntryID != all[0].videoEntryID
                    && ((try? h.index.sampleEntry(id: $0.videoEntryID))??.codec) == "h265"
            })
        let segs = Array(all[..<firstHEVC])
        #expect(Set(segs.map(\.videoEntryID)).count == 2, "two sample entries")

        let server = try await TestServer(index: h.index, storage: h.recorder.storage)
        let path = "/api/cameras/cam/view.mp4?start=\(segs[0].start90k)&end=\(segs[segs.count - 1].end90k)"
        let view = try await server.get(path)
        #expect(view.status == 200 && view.header("X-Recording-Truncated90k") == nil, "\(view.status) \(view.headers)")
        let file = h.root + "/seam.mp4"
        try view.body.write(to: URL(fileURLWithPath: file))
        #expect(try decodeErrors(file) == "")
        let sizes = try runProcess(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v", "-show_entries", "frame=width,height", "-of", "csv=p=0:s=x", file]
        )
        .stdout.split(separator: "\n").map { String($0.trimmingCharacters(in: CharacterSet(charactersIn: "x \r"))) }
        var shown: [String] = []
        for s in sizes where shown.last != s { shown.append(s) }
        #expect(shown == ["854x480", "1920x1080"], "\(shown)")
        let duration =
            Double(
                try runProcess(
                    "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file]
                )
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let wanted = Double(segs[segs.count - 1].end90k - segs[0].start90k) / 90_000
        #expect(abs(duration - wanted) < 0.2, "\(duration) s for \(wanted) s")
        // nvr export writes the same file.
        let export = try RangeExport.build(
            index: h.index, storage: h.recorder.storage, cameraID: segs[0].cameraID,
            start: segs[0].start90k, end: segs[segs.count - 1].end90k)
        #expect(export.truncatedAt == nil)
        try export.mp4.write(to: h.root + "/export.mp4")
        #expect(try Data(contentsOf: URL(fileURLWithPath: h.root + "/export.mp4")) == view.body)
        let toHEVC = try await server.get(
            "/api/cameras/cam/view.mp4?start=\(segs[0].start90k)&end=\(all[all.count - 1].end90k)")
        #expect(
            toHEVC.status == 200 && toHEVC.header("X-Recording-Truncated90k") == String(all[firstHEVC].start90k),
            "\(toHEVC.headers)")

        let python = TestEnvironment.repoRoot + "/.build/test-venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            "chromium is missing: run scripts/install-deps.sh test")
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "playwright is missing: run scripts/install-deps.sh test")
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let url = "http://127.0.0.1:\(server.port)\(path)"
        let r = try await TestEnvironment.blocking {
            try runProcess(
                python,
                [
                    TestEnvironment.repoRoot + "/Tests/Browser/seam_test.py", "--url", url, "--sizes",
                    "854x480,1920x1080", "--shots", shots,
                ])
        }
        #expect(r.status == 0, "chromium:\n\(r.stdout)\n\(r.stderr.suffix(2000))")
    }

    func jpegSize(_ data: Data, in dir: String) throws -> String {
        let p = dir + "/probe.jpg"
        try data.write(to: URL(fileURLWithPath: p))
        return try runProcess(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0:s=x", p]
        )
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func psnr(_ a: String, _ b: String) throws -> Double {
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            ["-i", a, "-i", b, "-lavfi", "[0:v]format=yuv420p[x];[1:v]format=yuv420p[y];[x][y]psnr", "-f", "null", "-"])
        guard let range = r.stderr.range(of: "average:") else {
            throw FixtureError("no PSNR in: \(r.stderr.suffix(300))")
        }
        let v = r.stderr[range.upperBound...].prefix { !$0.isWhitespace }
        return v == "inf" ? 100 : Double(v) ?? 0
    }
}
