import CamSim
import Foundation
import NVRIndex
import NVRPlayback
import NVRRecorder
import NVRTime
import TestSupport
import Testing

/// An Insta360 end to end against the OSC simulator and an ffmpeg RTMP pusher: live recording
/// through the NVR's RTMP listener (with a pusher that drops and comes back), the camera's
/// state in the API, card listing over several pages with +08:00 times, a gap filled from the
/// card, camera-side capture on NVR events, and OSC errors.
@Suite(.serialized, .tags(.system)) struct Insta360Tests {
    @Test func recordsTheRTMPPushAcrossAReconnectAndShowsTheCameraState() async throws {
        let f = try await Insta360Fixture()
        // Before anyone pushes, the camera waits on its listener.
        #expect(
            await TestEnvironment.eventually(timeout: 10) {
                f.session?.status.reason == "waiting for the camera to connect"
            })
        // A push with another stream key is refused (libavformat alone would take it), and the
        // camera's key stays out of the message.
        let stranger = RTMPPusher(url: "rtmp://127.0.0.1:\(f.rtmpPort)/live/WRONG")
        stranger.start()
        #expect(
            await TestEnvironment.eventually(timeout: 15) {
                f.session?.status.reason?.contains("refused a push with the wrong stream key 'WRONG'") == true
            },
            "\(String(describing: f.session?.status))")
        #expect(f.session?.status.reason?.contains(f.streamKey) == false)
        // It keeps trying (every half second) for a while: refusing it must not make the
        // listener back off, or the right camera's push would wait up to 30 s.
        try await Task.sleep(nanoseconds: 10_000_000_000)
        stranger.stop()
        #expect(try f.segments().isEmpty)

        let pushed = Date()
        let first = f.push()
        #expect(await TestEnvironment.eventually(timeout: 30) { f.session?.status.state == .streaming })
        #expect(
            Date().timeIntervalSince(pushed) < 6,
            "the right push waited \(Date().timeIntervalSince(pushed)) s after refused ones")
        #expect(
            try await TestEnvironment.eventually(timeout: 40) { try f.harness.completeSegments("x3").count >= 2 },
            "live segments")
        let seg = try #require(try f.harness.completeSegments("x3").first)
        let probed = try await TestEnvironment.blocking { try ffprobeStreams(f.harness.path(seg)) }
        #expect(
            probed.map(\.codec) == ["h264", "aac"] && (probed.first?.frames ?? 0) >= 50,
            "3 s of the 25 fps push with sound: \(probed)")

        // OSC state and options in the camera's status; a state change is seen through the fingerprint.
        #expect(
            try await TestEnvironment.eventually(timeout: 10) {
                f.session?.pluginInstance?.status()?.contains("\"battery_percent\":87") == true
            })
        let status = try await f.status()
        #expect(status["card_state"] as? String == "pass" && status["model"] as? String == "Insta360 X3", "\(status)")
        #expect(
            (status["card_total_bytes"] as? Int64) == 64_000_000_000
                && (status["card_remaining_bytes"] as? Int64 ?? 0) > 0, "\(status)")
        #expect((status["summary"] as? String)?.contains("battery 87 %, card ok (") == true, "\(status)")
        f.sim.setBattery(0.42)
        #expect(
            try await TestEnvironment.eventually(timeout: 8) {
                f.session?.pluginInstance?.status()?.contains("\"battery_percent\":42") == true
            },
            "checkForUpdates notices the new fingerprint")

        // The pusher drops: the camera waits again, and a new push is a new run.
        let runs = try f.liveRuns()
        #expect(runs.count == 1)
        first.stop()
        #expect(
            await TestEnvironment.eventually(timeout: 20) {
                f.session?.status.reason == "waiting for the camera to connect"
            },
            "listening again: \(String(describing: f.session?.status))")
        _ = f.push()
        #expect(
            try await TestEnvironment.eventually(timeout: 40) {
                try f.liveRuns().count == 2 && f.harness.completeSegments("x3").count >= 4
            },
            "a second run after the reconnect")
        let second = try #require(try f.segments().last { $0.state == .complete && !runs.contains($0.runID) })
        let errors = try await TestEnvironment.blocking { try decodeErrors(f.harness.path(second)) }
        #expect(errors.isEmpty, "\(errors)")

        // OSC etiquette, as the simulator saw it.
        let stats = f.sim.stats
        #expect(stats.headerViolations == 0 && stats.maxConcurrentCommands == 1, "\(stats)")
    }

    @Test func listsTheCardOverPagesAtPlus8AndFillsAGapFromIt() async throws {
        let f = try await Insta360Fixture()
        // Older footage: three 360 pairs and a single-lens MP4 (7 files), listed 3 a page.
        let now = Date()
        for i in 1...3 { try f.sim.addVideo(end: now.addingTimeInterval(-Double(i) * 600), seconds: 4) }
        let mp4End = Date(timeIntervalSince1970: (now.timeIntervalSince1970 - 2000).rounded(.down))
        try f.sim.addVideo(end: mp4End, seconds: 5, pair: false)

        let pusher = f.push()
        #expect(try await TestEnvironment.eventually(timeout: 40) { try f.harness.completeSegments("x3").count >= 2 })
        let lossStart = Time90k.now()
        pusher.stop()
        try await Task.sleep(nanoseconds: 12_000_000_000)
        _ = f.push()
        #expect(try await TestEnvironment.eventually(timeout: 40) { try f.liveRuns().count == 2 }, "live again")
        try await Task.sleep(nanoseconds: 4_000_000_000)
        // The camera kept recording to its card all along: one video from before the drop to now.
        let end = Date()
        let seconds = end.timeIntervalSince1970 - Double(lossStart) / 90_000 + 6
        try f.sim.addVideo(end: end, seconds: seconds)
        let resumed = try #require(try f.segments().first { $0.source == "live" && $0.start90k > lossStart }).start90k
        let from = try #require(try f.segments().first { $0.source == "live" }).start90k - 6 * 90_000

        // The periodic card sync lists every page and backfills the gap: one continuous timeline
        // (from 6 s before the first live run, which the card video also covers).
        let filled = try await TestEnvironment.eventually(timeout: 45) {
            let t = try f.harness.index.timelineSpans(
                cameraID: try f.harness.camera("x3").id!, start90k: from, end90k: resumed + 90_000)
            let nvr = Timeline.slices(t, within: from..<(resumed + 90_000))
            return zip(nvr, nvr.dropFirst()).allSatisfy { $1.start90k - $0.end90k <= Timeline.joinTolerance90k }
                && nvr.contains {
                    $0.source == .card && $0.start90k <= lossStart + 90_000 && $0.end90k >= resumed - 90_000
                }
        }
        let timeline = try await f.server.get("/api/cameras/x3/timeline?start=\(from)&end=\(resumed + 90_000)")
        #expect(filled, "\(timeline.json)")
        let stats = f.sim.stats
        #expect(
            Set(stats.listFilesPositions) == [0, 3, 6] && stats.listFilesPageSizes.allSatisfy { $0 == 3 },
            "9 files, 3 a page: \(stats.listFilesPositions)")

        // Every file listed; only the single-lens MP4 and the _00_ lens on the timeline.
        let cam = try f.harness.camera("x3")
        let slices = try f.harness.index.cardSlices(
            cameraID: cam.id!, start90k: from - 3 * 3600 * 90_000, end90k: Time90k.now() + 90_000,
            includeOffTimeline: true)
        #expect(slices.count == 9, "\(slices.map(\.name))")
        #expect(
            slices.filter(\.onTimeline).allSatisfy { $0.name.contains("_00_") }
                && slices.filter { !$0.onTimeline }.allSatisfy { $0.name.contains("_10_") })
        // The card's times are +08:00 and mark the END of capture: [end − duration, end].
        let mp4 = try #require(slices.first { $0.name.hasSuffix(".mp4") })
        let expectedEnd = Int64(mp4End.timeIntervalSince1970) * 90_000
        #expect(
            abs(mp4.end90k - expectedEnd) < 9_000 && abs((mp4.end90k - mp4.start90k) - 5 * 90_000) < 9_000,
            "\(Time90k.rfc3339(mp4.start90k))–\(Time90k.rfc3339(mp4.end90k)) vs end \(Time90k.rfc3339(expectedEnd))")
        let name = mp4.name  // VID_<local start>_00_NNN.mp4, local = UTC+8
        let f8 = DateFormatter()
        f8.timeZone = TimeZone(secondsFromGMT: 8 * 3600)
        f8.dateFormat = "yyyyMMdd_HHmmss"
        #expect(name.contains(f8.string(from: mp4End.addingTimeInterval(-5))), "\(name) is named in camera-local time")

        // The backfilled footage plays, live → card → live, as one file.
        let a = lossStart - 2 * 90_000
        let b = resumed + 90_000
        let view = try await f.server.get("/api/cameras/x3/view.mp4?start=\(a)&end=\(b)")
        #expect(view.status == 200)
        #expect(
            view.header("X-Recording-Gaps") == nil || view.header("X-Recording-Gaps") == "",
            "\(view.header("X-Recording-Gaps") ?? "")")
        let file = f.harness.root + "/across.mp4"
        try view.body.write(to: URL(fileURLWithPath: file))
        let errors = try await TestEnvironment.blocking { try decodeErrors(file) }
        #expect(errors.isEmpty, "\(errors)")
        #expect(try f.segments().filter { $0.source == "card" }.allSatisfy { $0.state == .complete })
    }

    /// Insta360's OSC reference gives `_dateTime` with no zone (its simulator copies that); a
    /// camera whose clock runs 3 s fast still has its card videos placed at the right time, from
    /// OSC's dateTimeZone option, or from the zone of the card's file stamps on a model without it.
    @Test(arguments: [false, true]) func correctsACameraClockThatRunsFast(withoutDateTimeZoneOption: Bool) async throws
    {
        let f = try await Insta360Fixture(configure: { o in
            o.clockDrift = 3
            if withoutDateTimeZoneOption { o.unknownOptions = ["dateTimeZone"] }
        })
        let end = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 600).rounded(.down))
        _ = try f.sim.addVideo(end: end, seconds: 5, pair: false)
        #expect(try await TestEnvironment.eventually(timeout: 20) { f.session?.pluginInstance != nil })
        let instance = try #require(f.session?.pluginInstance)
        let cam = try f.harness.camera("x3")
        let writer = f.harness.recorder.writer
        let storage = f.harness.recorder.storage
        let now = Time90k.now()
        let report = try await TestEnvironment.blocking {
            try CardSync(
                camera: cam, writer: writer, storage: storage, segmentSeconds: 3, logger: TestEnvironment.logger
            )
            .run(instance, window: (now - 3600 * 90_000)..<now, backfill: false)
        }
        #expect(
            abs((report.clockOffsetSeconds ?? 0) - 3) < 0.6,
            "clock offset \(String(describing: report.clockOffsetSeconds))")
        let slices = try f.harness.index.cardSlices(
            cameraID: cam.id!, start90k: now - 2 * 3600 * 90_000, end90k: now + 90_000, includeOffTimeline: true)
        let mp4 = try #require(slices.first { $0.name.hasSuffix(".mp4") })
        let trueEnd = Int64(end.timeIntervalSince1970) * 90_000
        #expect(
            abs(mp4.end90k - trueEnd) < 54_000,
            "card video ends \(Time90k.rfc3339(mp4.end90k)), truly \(Time90k.rfc3339(trueEnd))")
    }

    @Test func startsCameraCaptureOnEventsAndExplainsOSCErrors() async throws {
        let f = try await Insta360Fixture(
            configure: { $0.unknownOptions = ["_batteryCapacity"] },
            camera: ["capture_on_event_seconds": "2"])
        _ = f.push()
        #expect(try await TestEnvironment.eventually(timeout: 40) { f.session?.status.state == .streaming })

        // A model without a vendor option: the standard ones still come, and the status says so.
        #expect(
            try await TestEnvironment.eventually(timeout: 10) {
                f.session?.pluginInstance?.status()?.contains("card_remaining_bytes") == true
            })
        var status = try await f.status()
        #expect(
            status["vendor_options"] as? String == "not supported by this model"
                && status["battery_capacity_mah"] == nil, "\(status)")

        // An NVR event starts camera-side capture (captureMode video, startCapture) and stops it
        // 2 s later (stopCapture runs in progress, then done with the two lens files).
        let files0 = f.sim.cardFiles.count
        let session = try #require(f.session)
        session.events.begin(type: "test", source: .plugin, at: Time90k.now())
        #expect(await TestEnvironment.eventually(timeout: 5) { f.sim.isCapturing }, "capture started")
        session.events.end(type: "test", source: .plugin, at: Time90k.now())
        #expect(
            await TestEnvironment.eventually(timeout: 10) { !f.sim.isCapturing && f.sim.cardFiles.count == files0 + 2 },
            "stopped after 2 s")
        #expect(
            await TestEnvironment.eventually(timeout: 5) { f.pluginStatus()["last_capture_files"] as? [String] != nil })
        status = try await f.status()
        #expect((status["last_capture_files"] as? [String])?.count == 2 && status["captures"] as? Int == 1, "\(status)")

        // disabledCommand: a clear message in the status, and the next event tries again.
        f.sim.disable("camera.startCapture")
        session.events.begin(type: "test2", source: .plugin, at: Time90k.now())
        #expect(
            await TestEnvironment.eventually(timeout: 10) {
                (f.pluginStatus()["capture_error"] as? String)?.contains("disabledCommand") == true
            })
        status = try await f.status()
        #expect(
            (status["capture_error"] as? String)?.contains("refuses this command in its current mode") == true,
            "\(status)")
        session.events.end(type: "test2", source: .plugin, at: Time90k.now())

        // HTTP 500 and malformed JSON on listing the card: clear errors, and the next try works.
        let instance = try #require(f.session?.pluginInstance)
        f.sim.fail("camera.listFiles", with: .status(500), count: 1)
        #expect(throws: (any Error).self) { try instance.cardList() }
        do { _ = try instance.cardList() } catch { Issue.record("the retry works: \(error)") }
        f.sim.fail("camera.listFiles", with: .status(500), count: 1)
        do {
            _ = try instance.cardList()
            Issue.record("HTTP 500 is an error")
        } catch {
            #expect("\(error)".contains("camera answered HTTP 500 to camera.listFiles"), "\(error)")
        }
        f.sim.fail("camera.listFiles", with: .malformedJSON, count: 1)
        do {
            _ = try instance.cardList()
            Issue.record("malformed JSON is an error")
        } catch {
            #expect("\(error)".contains("malformed JSON from camera.listFiles"), "\(error)")
        }
        f.sim.fail("camera.listFiles", with: .oscError("invalidParameterName"), count: 1)
        do {
            _ = try instance.cardList()
            Issue.record("an OSC error is an error")
        } catch {
            #expect(
                "\(error)".contains("invalidParameterName") && "\(error)".contains("does not know a parameter"),
                "\(error)")
        }

        // A camera that stops answering (4 s, with a 2 s timeout): unreachable, then back.
        f.sim.fail("/osc/state", with: .hang(4), count: 2)
        f.sim.setBattery(0.5)
        #expect(await TestEnvironment.eventually(timeout: 15) { f.pluginStatus()["reachable"] as? Bool == false })
        status = try await f.status()
        #expect((status["last_error"] as? String)?.contains("no answer within 2 s") == true, "\(status)")
        #expect(await TestEnvironment.eventually(timeout: 20) { f.pluginStatus()["reachable"] as? Bool == true })
        #expect(f.session?.status.state == .streaming, "recording never depended on OSC")
    }
}
