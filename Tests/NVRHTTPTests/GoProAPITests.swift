import CamSim
import Foundation
import GoProAPI
import NVRPluginHost
import NVRRecorder
import TestSupport
import Testing

/// The GoPro plugin's decoders against GoPro's own OpenAPI description (a copy of
/// ../shared/reference/open-gopro-http-openapi.json in Tests/Fixtures), and the simulator's
/// answers validated against the same schemas — so plugin and simulator cannot agree on a
/// mistake.
@Suite(.tags(.system)) struct GoProAPITests {
    nonisolated(unsafe) static let spec: [String: Any] = {  // read-only after first use
        let path = TestEnvironment.repoRoot + "/Tests/Fixtures/open-gopro-http-openapi.json"
        let data = FileManager.default.contents(atPath: path)!
        return try! JSONSerialization.jsonObject(with: data) as! [String: Any]
    }()

    static var schemas: [String: Any] { (spec["components"] as! [String: Any])["schemas"] as! [String: Any] }
    static func path(_ p: String) -> [String: Any] {
        ((spec["paths"] as! [String: Any])[p] as! [String: Any])["get"] as! [String: Any]
    }

    /// A document made of a schema's documented examples (an enum's first value, else 0 / "").
    /// `strings`: every value as a string, the way the camera sends media values.
    static func example(_ schema: [String: Any], strings: Bool) -> [String: Any] {
        var out: [String: Any] = [:]
        for (k, v) in schema["properties"] as? [String: Any] ?? [:] {
            let p = v as! [String: Any]
            let value: Any = p["example"] ?? (p["enum"] as? [Any])?.first ?? (p["type"] as? String == "string" ? "" : 0)
            out[k] = strings && !(value is [Any]) ? "\(value)" : value
        }
        return out
    }

    @Test func decodesTheMediaListExampleOfTheReference() throws {
        let description = Self.path("/gopro/media/list")["description"] as! String
        let start = try #require(description.range(of: "```json\n"))
        let end = try #require(description.range(of: "```", range: start.upperBound..<description.endIndex))
        let list = try GoProMediaList(json: Data(description[start.upperBound..<end.lowerBound].utf8))
        #expect(list.id == "2530266050123724003")
        #expect(list.items.count == 1)
        let item = try #require(list.items.first)
        #expect(item.path == "100GOPRO/G0010008.JPG" && item.created == 1_613_669_353 && item.groupType == "t")
        #expect(!item.isVideo, "a time-lapse photo group is not a video to put on the timeline")
    }

    @Test func decodesVideoMetadataAndStateBuiltFromTheReferenceExamples() throws {
        let video = Self.example(Self.schemas["VideoMetadata"] as! [String: Any], strings: true)
        let info = try GoProMediaInfo(json: try JSONSerialization.data(withJSONObject: video))
        #expect(info.created == 1_692_992_748 && info.durationSeconds == 42 && info.size == 1_234_567_890)
        #expect(info.width == 1920 && info.height == 1080)
        #expect(abs((info.fps ?? 0) - 29.97) < 0.01, "fps 1001 / fps_denom 30000 as the reference gives them")

        let stateSchema = Self.schemas["State"] as! [String: Any]
        let statusSchema = (stateSchema["properties"] as! [String: Any])["status"] as! [String: Any]
        var status = Self.example(statusSchema, strings: false)
        #expect(status.count > 50, "the reference documents many statuses")
        for id in ["1", "2", "6", "8", "10", "13", "32", "33", "35", "54", "55", "60", "70", "117"] {
            #expect(status[id] != nil, "status \(id) is in the reference")
        }
        status["70"] = 64
        status["2"] = 2
        status["33"] = 1
        status["54"] = 1_048_576
        status["10"] = 1
        status["60"] = 250
        let state = try GoProState(
            json: try JSONSerialization.data(withJSONObject: ["status": status, "settings": [:]]))
        #expect(
            state.batteryPercent == 64 && state.batteryBars == 2 && state.storage == .full
                && state.sdRemainingKB == 1_048_576)
        #expect(state.encoding && !state.busy && state.minPollMilliseconds == 250)

        let dt = Self.path("/gopro/camera/get_date_time")
        let props =
            (((((dt["responses"] as! [String: Any])["200"] as! [String: Any])["content"] as! [String: Any])[
                "application/json"] as! [String: Any])["schema"] as! [String: Any])
        let clock = try GoProDateTime(
            json: try JSONSerialization.data(withJSONObject: Self.example(props, strings: false)))
        #expect(clock.localEpoch == 1_704_020_745 && clock.zoneMinutes == -480, "2023_12_31 11_05_45 read as UTC")
    }

    @Test func badAnswersAreClearErrors() {
        #expect(throws: GoProError.self) { try GoProState(json: Data("{\"status\": {\"1\": 1,".utf8)) }
        do { _ = try GoProMediaList(json: Data("<html>busy</html>".utf8)) } catch {
            #expect("\(error)".contains("malformed JSON from /gopro/media/list"))
        }
        #expect(throws: GoProError.self) { try GoProMediaList(json: Data("{\"id\":\"1\"}".utf8)) }
        #expect(throws: GoProError.self) { try GoProMediaInfo(json: Data("{\"cre\":\"1\",\"s\":\"2\"}".utf8)) }
    }

    @Test func fileNamesChaptersAndUSBAddress() throws {
        #expect(GoProFileName("GH010397.MP4") == GoProFileName("gh010397.mp4"))
        #expect(GoProFileName("GX030078.MP4")?.chapter == 3 && GoProFileName("GX030078.MP4")?.recording == 78)
        #expect(GoProFileName("GOPR0001.JPG") == nil)
        #expect(try GoProAPI.usbBaseURL(serial: "C0000123456789") == "http://172.27.189.51:8080")
        #expect(throws: GoProError.self) { try GoProAPI.usbBaseURL(serial: "C00001234567AB") }
        // Chapters stamped with the recording's start follow one another.
        func item(_ n: String, _ cre: Int64) -> GoProMediaList.Item {
            .init(directory: "100GOPRO", name: n, created: cre, modified: cre, size: 1)
        }
        func info(_ dur: Int64) throws -> GoProMediaInfo {
            try GoProMediaInfo(json: Data("{\"cre\":\"0\",\"s\":\"1\",\"dur\":\"\(dur)\"}".utf8))
        }
        let spans = GoProCardVideo.spans([
            (item("GH020078.MP4", 1000), try info(30)), (item("GH010078.MP4", 1000), try info(600)),
            (item("GH010079.MP4", 5000), try info(10)),
        ])
        #expect(spans.map(\.name) == ["GH010078.MP4", "GH020078.MP4", "GH010079.MP4"])
        #expect(spans.map(\.startLocal) == [1000, 1600, 5000])
    }

    @Test func cardTimesAreTurnedIntoUTCWithTheCameraClock() throws {
        let now: Int64 = 1_795_000_000 * 90_000
        // The camera's clock reads one hour and 7 s ahead of the NVR's (zone +01:00 and drift).
        let json =
            #"{"clock_local": 1795003607.0, "media": [{"id": "100GOPRO/GH010001.MP4", "name": "GH010001.MP4", "start_local": 1795003000, "duration": 20, "size": 99}, {"id": "x", "start_utc": 1794999000.5, "duration": 1.5}]}"#
        let l = try CardListing(json: json, now90k: now)
        #expect(l.clockOffsetSeconds == 3607)
        #expect(
            l.items[0].start90k == (1_795_003_000 - 3607) * 90_000
                && l.items[0].end90k - l.items[0].start90k == 20 * 90_000)
        #expect(l.items[1].start90k == 1_794_999_000 * 90_000 + 45_000 && l.items[1].bytes == 0)
        #expect(throws: PluginError.self) {
            try CardListing(json: #"{"media": [{"id": "a", "duration": 3}]}"#, now90k: now)
        }
        #expect(throws: PluginError.self) { try CardListing(json: "[]", now90k: now) }
        #expect((Int64(0)..<100).gaps(covered: [10..<20, 15..<30, 95..<200], minimum: 5) == [0..<10, 30..<95])
    }

    @Test func simulatorAnswersValidateAgainstTheReference() async throws {
        let f = try await GoProFixture { $0.chapterSeconds = 2 }
        #expect(
            await TestEnvironment.eventually(timeout: 20) { !f.sim.cardFiles.isEmpty }, "a first chapter on the card")
        func check(_ path: String, _ schema: [String: Any], strings: Bool) async throws {
            let (status, body) = try await f.get(path)
            #expect(status == 200, "\(path)")
            let doc = try JSONSerialization.jsonObject(with: body)
            let problems = SchemaCheck(root: Self.spec, numbersAsStrings: strings).problems(doc, schema, at: path)
            #expect(problems.isEmpty, "\(problems)")
        }
        func response(_ p: String) -> [String: Any] {
            let r = (Self.path(p)["responses"] as! [String: Any])["200"] as! [String: Any]
            if let ref = r["$ref"] as? String {
                return SchemaCheck(root: Self.spec, numbersAsStrings: false).resolve(ref)
            }
            return r
        }
        func schemaOf(_ p: String) -> [String: Any] {
            ((response(p)["content"] as! [String: Any])["application/json"] as! [String: Any])["schema"]
                as! [String: Any]
        }
        try await check("/gopro/camera/state", schemaOf("/gopro/camera/state"), strings: false)
        try await check("/gopro/camera/get_date_time", schemaOf("/gopro/camera/get_date_time"), strings: false)
        // Media values come as strings although the schema says integer (the reference says so).
        try await check("/gopro/media/list", schemaOf("/gopro/media/list"), strings: true)
        let name = try #require(f.sim.cardFiles.first)
        try await check(
            "/gopro/media/info?path=100GOPRO/\(name)", Self.schemas["VideoMetadata"] as! [String: Any], strings: true)
        let (_, body) = try await f.get("/gopro/media/list")
        let fs =
            (((try JSONSerialization.jsonObject(with: body) as! [String: Any])["media"] as! [[String: Any]])[0]["fs"]
                as! [[String: Any]])
        #expect(fs.allSatisfy { $0.values.allSatisfy { $0 is String } }, "every media-list value is a string")
    }
}

/// Checks a JSON document against an OpenAPI 3.1 schema: type, required, properties, items,
/// enum, anyOf, $ref — the parts GoPro's description uses.
struct SchemaCheck {
    let root: [String: Any]
    /// Accept a decimal string where the schema says integer (the camera's media answers).
    let numbersAsStrings: Bool

    func resolve(_ ref: String) -> [String: Any] {
        var node: Any = root
        for part in ref.dropFirst(2).split(separator: "/") { node = (node as! [String: Any])[String(part)]! }
        return node as! [String: Any]
    }

    func problems(_ value: Any, _ schemaIn: [String: Any], at path: String) -> [String] {
        var schema = schemaIn
        if let ref = schema["$ref"] as? String { schema = resolve(ref) }
        if let any = schema["anyOf"] as? [[String: Any]] {
            let each = any.map { problems(value, $0, at: path) }
            if !each.contains(where: \.isEmpty) {
                return ["\(path): matches none of anyOf: \(each.flatMap { $0 }.prefix(3))"]
            }
        }
        var out: [String] = []
        switch schema["type"] as? String {
        case "object":
            guard let o = value as? [String: Any] else { return ["\(path): not an object"] }
            for r in schema["required"] as? [String] ?? [] where o[r] == nil {
                out.append("\(path): lacks required \(r)")
            }
            for (k, v) in o {
                if let p = (schema["properties"] as? [String: Any])?[k] as? [String: Any] {
                    out += problems(v, p, at: "\(path).\(k)")
                }
            }
        case "array":
            guard let a = value as? [Any] else { return ["\(path): not an array"] }
            if let items = schema["items"] as? [String: Any] {
                for (i, v) in a.enumerated() { out += problems(v, items, at: "\(path)[\(i)]") }
            }
        case "integer":
            if let s = value as? String {
                if !numbersAsStrings || Int64(s) == nil { out.append("\(path): '\(s)' is not an integer") }
            } else if !(value is NSNumber)
                || (value as! NSNumber).doubleValue != (value as! NSNumber).doubleValue.rounded()
            {
                out.append("\(path): \(value) is not an integer")
            }
        case "string":
            if !(value is String) { out.append("\(path): \(value) is not a string") }
        default: break
        }
        if let allowed = schema["enum"] as? [Any], out.isEmpty {
            let text = "\(value)"
            if !allowed.contains(where: { "\($0)" == text }) { out.append("\(path): \(text) is not one of \(allowed)") }
        }
        return out
    }
}
