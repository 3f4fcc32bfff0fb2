import Foundation
import TestSupport
import Testing

@testable import ONVIFAPI

/// ONVIF as the plugin speaks it, against Tests/Support/onvif_camera.py — itself checked by
/// onvif-zeep, an independent client, so the two sides do not merely agree with each other.
@Suite(.serialized, .tags(.system)) struct ONVIFTests {
    static func camera(
        clockOffset: Double = 0, password: String = "secret", ptz: ONVIFCameraFixture.PTZ? = nil
    ) throws -> ONVIFCameraFixture {
        var o = ONVIFCameraFixture.Options(mainURI: "rtsp://127.0.0.1:8554/main")
        o.ptz = ptz
        o.subURI = "rtsp://127.0.0.1:8554/sub"
        o.password = password
        o.clockOffset = clockOffset
        return try ONVIFCameraFixture(o)
    }

    @Test func digestMatchesTheONVIFProgrammersGuide() {
        // ONVIF Application Programmer's Guide, "Authentication": the worked example.
        let nonce = Array(Data(base64Encoded: "LKqI6G/AikKCQrN0zqZFlg==") ?? Data())
        #expect(
            WSSecurity.digest(nonce: nonce, created: "2010-09-16T07:50:45Z", password: "userpassword")
                == "tuOSpGlFlIXsozq4HFNeeGeFLEI=")
        #expect(WSSecurity.timestamp(Date(timeIntervalSince1970: 1_284_623_445)) == "2010-09-16T07:50:45Z")
    }

    @Test(arguments: [3600.0, -3600.0]) func aCameraClockOffByAnHourStillAuthenticates(offset: Double) throws {
        let cam = try Self.camera(clockOffset: offset)
        let client = ONVIFClient(deviceURL: cam.deviceURL, user: "admin", password: "secret")
        // Without the camera's clock the token is an hour off and refused.
        #expect(throws: ONVIFError.self) { try client.deviceInformation() }
        let measured = try client.syncClock()
        #expect(abs(measured - offset) < 2, "measured \(measured) s")
        let info = try client.deviceInformation()
        #expect(info.model == "SimCam-1" && info.firmware == "1.2.3")
        let services = try client.services()
        #expect(services.media == "http://\(cam.address)/onvif/media_service")
        #expect(services.events == "http://\(cam.address)/onvif/events_service")
        let profiles = try client.profiles(media: services.media)
        #expect(profiles.map(\.token) == ["main", "sub"])
        #expect(profiles.map(\.pixels) == [640 * 360, 320 * 180])
        #expect(profiles.first?.encoding == "H264")
        #expect(try client.streamURI(media: services.media, profile: "sub") == "rtsp://127.0.0.1:8554/sub")
        #expect(try client.snapshotURI(media: services.media, profile: "main") == "http://\(cam.address)/snapshot.jpg")
        #expect(throws: ONVIFError.self) { try client.streamURI(media: services.media, profile: "nope") }
    }

    @Test func aWrongPasswordIsSaidAsSuch() throws {
        let cam = try Self.camera()
        let client = ONVIFClient(deviceURL: cam.deviceURL, user: "admin", password: "not-it")
        try client.syncClock()
        do {
            _ = try client.deviceInformation()
            Issue.record("a wrong password was accepted")
        } catch let e as ONVIFError {
            #expect(e.kind == .notAuthorized)
            #expect(e.description.contains("refused the user name or password"), "\(e)")
        }
        let nobody = ONVIFClient(
            deviceURL: "http://127.0.0.1:9/onvif/device_service", user: "a", password: "b", timeout: 2)
        do {
            try nobody.syncClock()
            Issue.record("a closed port answered")
        } catch let e as ONVIFError { #expect(e.kind == .unreachable, "\(e)") }
    }

    @Test func pullPointReportsMotionAtOnceAndADroppedSubscriptionIsSaid() throws {
        let cam = try Self.camera(clockOffset: 3600)
        let client = ONVIFClient(deviceURL: cam.deviceURL, user: "admin", password: "secret")
        try client.syncClock()
        let events = try #require(try client.services().events)
        let sub = try PullPointSubscription(client: client, events: events, seconds: 60)
        // The state at subscription time first.
        let initial = try sub.pull(seconds: 1)
        #expect(initial.count == 1)
        #expect(initial.first?.operation == "Initialized")
        #expect(initial.first?.topic == "tns1:RuleEngine/CellMotionDetector/Motion")
        #expect(initial.first.map { $0.nvrEvent?.type == "motion" && $0.nvrEvent?.active == false } == true)
        // Motion while a pull waits: it answers at once.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { try? cam.motion(true) }
        let began = Date()
        let pulled = try sub.pull(seconds: 5)
        let waited = Date().timeIntervalSince(began)
        #expect(waited < 1.5, "the pull answered after \(waited) s")
        #expect(pulled.first.map { $0.nvrEvent?.type == "motion" && $0.nvrEvent?.active == true } == true, "\(pulled)")
        #expect(pulled.first?.source["Rule"] == "MyMotionDetectorRule")
        try sub.renew(seconds: 60)
        // The camera drops it: the next pull says so (the plugin then subscribes again).
        try cam.dropSubscriptions()
        do {
            _ = try sub.pull(seconds: 1)
            Issue.record("a dropped subscription was pulled")
        } catch let e as ONVIFError {
            #expect(e.kind == .subscriptionGone, "\(e)")
        }
        let again = try PullPointSubscription(client: client, events: events, seconds: 60)
        #expect(again.address != sub.address)
        #expect(
            try again.pull(seconds: 1).first?.nvrEvent?.active == true,
            "a new subscription starts with the current state")
        // Many cameras say it the WS-BaseFaults way: a plain Receiver code, no Subcode, and a
        // ResourceUnknownFault in the Detail, prefixed or in its namespace by default.
        var current = again
        for style in [ONVIFCameraFixture.UnknownSubscriptionFault.detail, .detailUnprefixed] {
            try cam.dropSubscriptions(fault: style)
            do {
                _ = try current.pull(seconds: 1)
                Issue.record("a dropped subscription was pulled (\(style))")
            } catch let e as ONVIFError {
                #expect(e.kind == .subscriptionGone, "\(style): \(e)")
            }
            current = try PullPointSubscription(client: client, events: events, seconds: 60)
        }
        current.unsubscribe()
    }

    /// Faults as cameras write them, without a camera: only a lost subscription is one.
    @Test func resourceUnknownIsRecognisedWhereverTheFaultPutsIt() throws {
        func kind(_ body: String) throws -> ONVIFError.Kind {
            let doc = try XMLReader.parse(body)
            return ONVIFClient.error(fault: try #require(doc.first("Fault")), operation: "PullMessages").kind
        }
        let soap12 = "xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\""
        #expect(
            try kind(
                """
                <s:Fault \(soap12) xmlns:wsrf-r="http://docs.oasis-open.org/wsrf/r-2"><s:Code><s:Value>s:Receiver</s:Value></s:Code>
                <s:Reason><s:Text>gone</s:Text></s:Reason><s:Detail><wsrf-r:ResourceUnknownFault/></s:Detail></s:Fault>
                """) == .subscriptionGone)
        #expect(
            try kind(
                """
                <s:Fault \(soap12)><s:Code><s:Value>s:Receiver</s:Value></s:Code><s:Reason><s:Text>gone</s:Text></s:Reason>
                <s:Detail><ResourceUnknownFault xmlns="http://docs.oasis-open.org/wsrf/r-2"><Timestamp>x</Timestamp></ResourceUnknownFault></s:Detail></s:Fault>
                """) == .subscriptionGone)
        #expect(
            try kind(
                """
                <SOAP-ENV:Fault xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/"><faultcode>SOAP-ENV:Server</faultcode>
                <faultstring>gone</faultstring><detail><wsrf-r:ResourceUnknownFault xmlns:wsrf-r="http://docs.oasis-open.org/wsrf/r-2"/></detail></SOAP-ENV:Fault>
                """) == .subscriptionGone, "SOAP 1.1")
        #expect(
            try kind(
                """
                <s:Fault \(soap12)><s:Code><s:Value>s:Receiver</s:Value></s:Code><s:Reason><s:Text>busy</s:Text></s:Reason>
                <s:Detail><Text>ResourceUnknownFault is not this</Text></s:Detail></s:Fault>
                """) != .subscriptionGone, "only the element counts, not the word")
    }

    @Test func eventTopicsCamerasSend() {
        /// "type on|off", or nil.
        func n(_ topic: String, _ data: [String: String]) -> String? {
            ONVIFNotification(topic: topic, data: data).nvrEvent.map { "\($0.type) \($0.active ? "on" : "off")" }
        }
        #expect(n("tns1:VideoSource/MotionAlarm", ["State": "true"]) == "motion on")
        #expect(n("tns1:RuleEngine/CellMotionDetector/Motion", ["IsMotion": "false"]) == "motion off")
        #expect(n("tns1:RuleEngine/TamperDetector/Tamper", ["IsTamper": "true"]) == "tamper on")
        #expect(n("tns1:VideoSource/GlobalSceneChange/ImagingService", ["State": "true"]) == "tamper on")
        #expect(n("tns1:RuleEngine/MyRuleDetector/PeopleDetect", ["State": "true"]) == "person on")
        #expect(n("tns1:RuleEngine/MyRuleDetector/VehicleDetect", ["State": "1"]) == "vehicle on")
        #expect(
            n("tns1:RuleEngine/ObjectDetection/Object", ["ClassTypes": "Human", "IsInside": "true"]) == "person on")
        #expect(
            n("tns1:Device/Trigger/DigitalInput", ["LogicalState": "true"]) == nil, "topics the NVR does not record on")
        #expect(n("tns1:VideoSource/MotionAlarm", ["State": "maybe"]) == nil)
    }

    @Test func hostileXMLIsRefusedNotCrashedOn() throws {
        let doc = try XMLReader.parse(
            "<?xml version=\"1.0\"?><!-- c --><a:R xmlns:a=\"x\" k='v &amp; w'><b>1 &lt; 2 &#x41;&#66;<![CDATA[<raw>]]></b><c/></a:R>"
        )
        #expect(doc.name == "R" && doc.attributes["k"] == "v & w")
        #expect(doc.child("b")?.text == "1 < 2 AB<raw>")
        #expect(doc.child("c") != nil)
        let bad = [
            "", "<a>", "<a></b>", "<a b=c></a>", "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "<a></a><b/>",
            "<a x=\"1>",
            String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100), "<a><![CDATA[ never ends</a>",
            "\u{0}<",
        ]
        for text in bad { #expect(throws: XMLReader.Failure.self, "\(text.prefix(40))") { try XMLReader.parse(text) } }
        // Every prefix of a real answer fails cleanly or parses.
        let answer = String(
            decoding: Data(SOAP.envelope(body: "<tds:X a=\"1\"><tt:Y>2</tt:Y></tds:X>").utf8), as: UTF8.self)
        for i in 0..<answer.count { _ = try? XMLReader.parse(String(answer.prefix(i))) }
        #expect(try XMLReader.parse(answer).first("Y")?.value == "2")
    }

    @Test func probeMatchesAreReadAndStrangersIgnored() {
        // The shape of WS-Discovery's example answer (and of cameras'), prefixes as cameras vary them.
        let answer = """
            <?xml version="1.0" encoding="UTF-8"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="http://www.w3.org/2003/05/soap-envelope" \
            xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:wsdd="http://schemas.xmlsoap.org/ws/2005/04/discovery">\
            <SOAP-ENV:Header><wsa:MessageID>urn:uuid:1</wsa:MessageID><wsa:RelatesTo>urn:uuid:abc</wsa:RelatesTo></SOAP-ENV:Header>\
            <SOAP-ENV:Body><wsdd:ProbeMatches><wsdd:ProbeMatch><wsa:EndpointReference><wsa:Address>urn:uuid:cam-1</wsa:Address>\
            </wsa:EndpointReference><wsdd:Types>dn:NetworkVideoTransmitter tds:Device</wsdd:Types>\
            <wsdd:Scopes>onvif://www.onvif.org/name/Front%20Door onvif://www.onvif.org/hardware/IPC-1 onvif://www.onvif.org/type/video_encoder</wsdd:Scopes>\
            <wsdd:XAddrs>http://[fe80::1]/onvif/device_service http://192.168.1.20/onvif/device_service http://192.168.1.20:8000/x</wsdd:XAddrs>\
            <wsdd:MetadataVersion>1</wsdd:MetadataVersion></wsdd:ProbeMatch></wsdd:ProbeMatches></SOAP-ENV:Body></SOAP-ENV:Envelope>
            """
        let m = WSDiscovery.matches(in: Data(answer.utf8), messageID: "abc")
        #expect(m.count == 1)
        #expect(m.first?.endpoint == "urn:uuid:cam-1")
        #expect(m.first?.address == "192.168.1.20", "port 80 left out, IPv6 skipped")
        #expect(m.first?.scope("name") == "Front Door" && m.first?.scope("hardware") == "IPC-1")
        #expect(
            WSDiscovery.matches(in: Data(answer.utf8), messageID: "other").isEmpty, "an answer to someone else's probe")
        for junk in [
            "", "<x/>", String(answer.prefix(300)), answer.replacingOccurrences(of: "urn:uuid:cam-1", with: ""),
        ] {
            #expect(WSDiscovery.matches(in: Data(junk.utf8), messageID: "abc").isEmpty)
        }
        #expect(WSDiscovery.probeMessage(id: "abc").contains("<d:Types>dn:NetworkVideoTransmitter</d:Types>"))
        #expect((try? XMLReader.parse(WSDiscovery.probeMessage(id: "abc"))) != nil)
    }

    /// Hello and Bye, as cameras (and printers) send them to the group unasked.
    @Test func helloFromACameraAndByeAreReadAndPrintersIgnored() {
        func envelope(_ body: String) -> Data {
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" \
                xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery">\
                <s:Header><a:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Hello</a:Action><a:MessageID>urn:uuid:9</a:MessageID>\
                <d:AppSequence InstanceId="1" MessageNumber="1"/></s:Header><s:Body>\(body)</s:Body></s:Envelope>
                """.utf8)
        }
        let epr = "<a:EndpointReference><a:Address>urn:uuid:cam-2</a:Address></a:EndpointReference>"
        let hello = envelope(
            "<d:Hello>\(epr)<d:Types>dn:NetworkVideoTransmitter</d:Types><d:Scopes>onvif://www.onvif.org/name/Garage</d:Scopes>"
                + "<d:XAddrs>http://192.168.1.21/onvif/device_service</d:XAddrs><d:MetadataVersion>1</d:MetadataVersion></d:Hello>"
        )
        guard case .hello(let m)? = WSDiscovery.announcement(in: hello) else {
            Issue.record("a camera's Hello is read")
            return
        }
        #expect(m.endpoint == "urn:uuid:cam-2" && m.address == "192.168.1.21" && m.scope("name") == "Garage")
        let printer = envelope(
            "<d:Hello>\(epr)<d:Types>wprt:PrintDeviceType</d:Types><d:XAddrs>http://192.168.1.30/</d:XAddrs></d:Hello>")
        #expect(WSDiscovery.announcement(in: printer) == nil)
        #expect(WSDiscovery.announcement(in: envelope("<d:Bye>\(epr)</d:Bye>")) == .bye(endpoint: "urn:uuid:cam-2"))
        #expect(WSDiscovery.announcement(in: envelope("<d:Bye></d:Bye>")) == nil)
        #expect(
            WSDiscovery.announcement(in: Data(WSDiscovery.probeMessage(id: "abc").utf8)) == nil,
            "our own Probe, looped back")
    }

    /// The simulator against onvif-zeep and WSDiscovery (PyPI): digests with onvif-zeep's own
    /// clock adjustment, profiles, stream URIs, a PullPoint long poll, Renew and Unsubscribe, a
    /// wrong password and an unadjusted clock refused; the PTZ service (a move that ends at its
    /// Timeout or, for a camera that ignores it, does not; Stop; presets; absolute zoom).
    @Test(arguments: [ONVIFCameraFixture.PTZ.timeout, .ignoresTimeout])
    func theSimulatorSatisfiesAnIndependentONVIFClient(ptz: ONVIFCameraFixture.PTZ) throws {
        let cam = try Self.camera(clockOffset: 3600, ptz: ptz)
        let python = TestEnvironment.repoRoot + "/.build/test-venv/bin/python"
        let script = TestEnvironment.repoRoot + "/Tests/Support/onvif_client_check.py"
        let r = try runProcess(
            python,
            [
                script, "--port", String(cam.port), "--user", "admin", "--password", "secret", "--clock-offset", "3600",
                "--ptz", ptz.rawValue,
            ])
        #expect(
            r.status == 0 && r.stdout.contains("OK camera") && r.stdout.contains("OK ptz"), "\(r.stdout)\n\(r.stderr)")
    }
}
