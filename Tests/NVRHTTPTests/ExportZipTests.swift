import Foundation
import NVRIndex
import NVRPlayback
import TestSupport
import Testing

/// GET /api/export.zip and timelapse.mp4 through a real HTTP server, over footage recorded
/// in-process from encoded files.
@Suite struct ExportZipTests {
    @Test func threeCamerasTimesFiveMinutesInOneDownload() async throws {
        let h = try RecorderHarness()
        let start = Time90k.now() - 3600 * 90_000
        for (name, pattern) in [("front", "testsrc"), ("yard", "smptebars"), ("door", "rgbtestsrc")] {
            let clip = h.root + "/\(name).ts"
            try RecorderHarness.makeClip(clip, seconds: 330, pattern: pattern)
            try h.record([clip], as: name, start90k: start)
        }
        let server = try await TestServer(index: h.index, storage: h.recorder.storage)
        let from = start + 15 * 90_000
        let to = from + 300 * 90_000
        let query = "cameras=front,yard,door&start=\(Time90k.rfc3339(from))&end=\(Time90k.rfc3339(to))"

        let head = try await server.get("/api/export.zip?" + query, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        let a = try await server.get("/api/export.zip?" + query)
        #expect(a.status == 200, "\(a.status) \(String(decoding: a.body, as: UTF8.self).prefix(300))")
        #expect(a.header("Content-Type") == "application/zip")
        #expect(head.header("X-Export-Cameras") == "front,yard,door" && head.header("X-Export-Empty") == "")
        #expect(
            a.header("Content-Length") == String(a.body.count) && head.header("Content-Length") == String(a.body.count))
        #expect(a.header("Content-Disposition")?.hasPrefix("attachment; filename=\"nvr-") == true)
        let zip = h.root + "/download.zip"
        try a.body.write(to: URL(fileURLWithPath: zip))
        let (dir, entries) = try unzipChecked(zip)
        #expect(Set(entries.keys) == ["front.mp4", "yard.mp4", "door.mp4", "export.txt"])
        for name in ["front", "yard", "door"] {
            let probed = try ffprobeStreams(dir + "/\(name).mp4")
            #expect(probed.map(\.codec) == ["h264"])
            #expect(abs((probed.first?.duration ?? 0) - 300) < 0.15, "\(name): \(probed)")
            #expect(try decodeErrors(dir + "/\(name).mp4").isEmpty)
        }

        // The same hour as timelapses (the range is 5 minutes: 10 s at 30×).
        let t = try await server.get("/api/export.zip?" + query + "&speed=30")
        #expect(t.status == 200)
        try t.body.write(to: URL(fileURLWithPath: h.root + "/timelapse.zip"))
        let (tdir, _) = try unzipChecked(h.root + "/timelapse.zip")
        #expect(abs((try ffprobeStreams(tdir + "/yard.mp4").first?.duration ?? 0) - 10) < 0.1)

        // One camera's timelapse is a view.mp4: Range, HEAD and the X-Recording headers.
        let one = "/api/cameras/door/timelapse.mp4?start=\(Time90k.rfc3339(from))&end=\(Time90k.rfc3339(to))&speed=60"
        let whole = try await server.get(one)
        // It starts with the picture showing at `start` (as sent: RFC 3339 has milliseconds).
        let sent = try #require(Time90k.parse(Time90k.rfc3339(from)))
        #expect(whole.status == 200 && whole.header("X-Recording-Start90k") == String(sent))
        let part = try await server.get(one, headers: ["Range": "bytes=0-99"])
        #expect(part.status == 206 && part.body == whole.body.prefix(100))
        #expect(try await server.get(one, method: "HEAD").header("Content-Length") == String(whole.body.count))

        // Bad requests get a 4xx that says what was wrong.
        let range = "start=\(Time90k.rfc3339(from))&end=\(Time90k.rfc3339(to))"
        for (path, status, says) in [
            ("/api/export.zip?" + range, 400, "cameras is required"),
            ("/api/export.zip?cameras=front,front&" + range, 400, "once"),
            ("/api/export.zip?cameras=front,&" + range, 400, "once"),
            ("/api/export.zip?cameras=front,nobody&" + range, 404, "'nobody'"),
            ("/api/export.zip?cameras=front&" + range + "&speed=1", 400, "speed"),
            ("/api/export.zip?cameras=front&start=0&end=90000", 404, "nothing recorded"),
            ("/api/export.zip?cameras=front&start=0&end=\(Time90k.now())", 400, "at most"),
            ("/api/cameras/front/timelapse.mp4?" + range, 400, "speed is required"),
            ("/api/cameras/front/timelapse.mp4?start=0&end=\(Time90k.now())&speed=720", 400, "31 days"),
        ] {
            let r = try await server.get(path)
            let text = String(decoding: r.body, as: UTF8.self)
            #expect(r.status == status && text.contains(says), "\(path): \(r.status) \(text)")
        }
    }
}
