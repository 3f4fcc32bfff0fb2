import Foundation
import Testing

@testable import NVRRecorder

/// What PTZ commands the API and MQTT take, and how a plugin's answer is read: the checks are
/// the only thing between a request and a camera's motors.
struct PTZCommandTests {
    static func body(_ json: String) throws -> PTZCommand.Body {
        try JSONDecoder().decode(PTZCommand.Body.self, from: Data(json.utf8))
    }

    @Test func movesAreBoundedAndNeedASpeed() throws {
        #expect(
            try PTZCommand(Self.body(#"{"action":"move","pan":-0.5,"zoom":1}"#))
                == .move(pan: -0.5, tilt: 0, zoom: 1, seconds: PTZCommand.defaultMove))
        #expect(
            try PTZCommand(Self.body(#"{"action":"move","tilt":1,"seconds":10}"#))
                == .move(pan: 0, tilt: 1, zoom: 0, seconds: 10))
        for bad in [
            #"{"action":"move"}"#, #"{"action":"move","pan":0}"#, #"{"action":"move","pan":1.01}"#,
            #"{"action":"move","tilt":-2}"#, #"{"action":"move","pan":1,"seconds":0}"#,
            #"{"action":"move","pan":1,"seconds":10.5}"#, #"{"action":"zoom","zoom":-0.1}"#, #"{"action":"zoom"}"#,
            #"{"action":"preset"}"#, #"{"action":"preset","preset":""}"#, #"{"action":"savePreset"}"#,
            #"{"action":"turn"}"#,
        ] {
            #expect(throws: PTZCommand.Invalid.self, "\(bad)") { try PTZCommand(Self.body(bad)) }
        }
        let long = String(repeating: "x", count: 65)
        #expect(throws: PTZCommand.Invalid.self) {
            try PTZCommand(Self.body(#"{"action":"preset","preset":"\#(long)"}"#))
        }
        #expect(throws: PTZCommand.Invalid.self) {
            try PTZCommand(Self.body(#"{"action":"savePreset","name":"a\u0007b"}"#))
        }
        #expect(
            try PTZCommand(Self.body(#"{"action":"savePreset","name":"Gate","preset":"3"}"#))
                == .savePreset(name: "Gate", replacing: "3"))
        // A true where a number goes is not JSON this call takes.
        #expect(throws: DecodingError.self) { try Self.body(#"{"action":"move","pan":true}"#) }
    }

    @Test func mqttTakesWordsOrTheAPIsJSON() throws {
        #expect(try PTZCommand(mqtt: " Left\n") == .move(pan: -0.5, tilt: 0, zoom: 0, seconds: 1))
        #expect(try PTZCommand(mqtt: "zoom_out") == .move(pan: 0, tilt: 0, zoom: -0.5, seconds: 1))
        #expect(try PTZCommand(mqtt: "stop") == .stop)
        #expect(try PTZCommand(mqtt: "preset:Door 1") == .goTo(preset: "Door 1"))
        #expect(try PTZCommand(mqtt: #"{"action":"zoom","zoom":0.25}"#) == .zoom(0.25))
        for bad in ["", "spin", "preset:", #"{"action":"move","pan":3}"#, "{not json"] {
            #expect(throws: PTZCommand.Invalid.self, "\(bad)") { try PTZCommand(mqtt: bad) }
        }
    }

    @Test func thePluginIsSentWhatNvrPluginHSays() throws {
        func object(_ c: PTZCommand) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(c.pluginRequest.utf8)) as? [String: Any])
        }
        let move = try object(.move(pan: 0.5, tilt: -1, zoom: 0, seconds: 2))
        #expect(move["op"] as? String == "move" && move["pan"] as? Double == 0.5 && move["tilt"] as? Double == -1)
        #expect(move["seconds"] as? Double == 2)
        #expect(try object(.goTo(preset: "1"))["op"] as? String == "goto")
        let set = try object(.savePreset(name: "Gate", replacing: nil))
        #expect(set["op"] as? String == "set" && set["name"] as? String == "Gate" && set["preset"] == nil)
        #expect(try object(.describe)["op"] as? String == "describe")
    }

    @Test func aPluginsAnswerIsBounded() throws {
        let many = (0..<300).map { #"{"token":"\#($0)","name":"\#(String(repeating: "n", count: 100))"}"# }
        let answer = try PTZControl.parse(
            #"{"presets":[\#(many.joined(separator: ",")),{"token":"","name":"empty"}],"pan_tilt":true,"zoom":false,"absolute_zoom":true,"position":{"pan":0.5,"tilt":0,"zoom":0.1}}"#,
            for: .describe, camera: "c")
        guard case .described(let d) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(d.presets.count == 256 && d.presets.allSatisfy { $0.name.count == 64 })
        #expect(d.panTilt && !d.zoom && d.absoluteZoom && d.position?.pan == 0.5)
        #expect(throws: PTZControl.Failure.self) {
            try PTZControl.parse(#"{"unsupported":"the camera offers no PTZ service"}"#, for: .stop, camera: "c")
        }
        #expect(throws: PTZControl.Failure.self) { try PTZControl.parse("[1,2]", for: .stop, camera: "c") }
        #expect(throws: PTZControl.Failure.self) {
            try PTZControl.parse("{}", for: .savePreset(name: "x", replacing: nil), camera: "c")
        }
        #expect(
            try PTZControl.parse(#"{"preset":"7"}"#, for: .savePreset(name: "x", replacing: nil), camera: "c")
                == .saved(preset: "7"))
        #expect(try PTZControl.parse("{}", for: .stop, camera: "c") == .done)
    }
}
