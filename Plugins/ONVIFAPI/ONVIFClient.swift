import Foundation
import PluginSupport

/// Speaks ONVIF (SOAP 1.2 over HTTP) to one camera: its clock, its device information, the
/// addresses of its services, its media profiles and their stream and snapshot URIs. Every
/// call but GetSystemDateAndTime carries a WS-Security digest made on the camera's clock.
public final class ONVIFClient: @unchecked Sendable {
    // @unchecked Sendable: `offset` is behind `lock`; the rest is immutable.
    public let deviceURL: String
    public let user: String
    private let password: String
    private let http: HTTPClient
    private let lock = NSLock()
    private var offset: Double = 0

    public init(deviceURL: String, user: String, password: String, timeout: Double = 5) {
        self.deviceURL = deviceURL
        self.user = user
        self.password = password
        http = HTTPClient(timeout: timeout)
    }

    /// Seconds the camera's clock is ahead of ours (negative: behind), from `syncClock`.
    public var clockOffset: Double {
        get {
            lock.lock()
            defer { lock.unlock() }
            return offset
        }
        set {
            lock.lock()
            offset = newValue
            lock.unlock()
        }
    }

    /// Sends one request element to `url`; returns the first element of the answer's Body.
    /// `action`/`to`: WS-Addressing headers, which subscription managers want.
    public func call(
        _ url: String, _ body: String, authenticated: Bool = true, action: String? = nil,
        timeout: Double? = nil
    ) throws -> XMLNode {
        var header =
            authenticated
            ? WSSecurity.header(user: user, password: password, created: Date().addingTimeInterval(clockOffset)) : ""
        if let action {
            header += "<wsa:Action>\(SOAP.escape(action))</wsa:Action><wsa:To>\(SOAP.escape(url))</wsa:To>"
        }
        let op = Self.operation(body)
        let client = timeout.map { HTTPClient(timeout: $0) } ?? http
        let r: HTTPClient.Response
        do {
            r = try client.fetch(
                url, method: "POST", headers: ["Content-Type": "application/soap+xml; charset=utf-8"],
                body: Data(SOAP.envelope(body: body, header: header).utf8), maxBody: 4 << 20)
        } catch {
            throw ONVIFError(.unreachable, "camera unreachable at \(url) (\(op)): \(error)")
        }
        if r.status == 401 {
            throw ONVIFError(
                .notAuthorized, "the camera refused the user name or password for '\(user)' (\(op): HTTP 401)")
        }
        let doc: XMLNode
        do { doc = try XMLReader.parse(r.body) } catch {
            throw ONVIFError(
                r.status == 200 ? .malformed : .refused, "\(op): the camera answered HTTP \(r.status), \(error)")
        }
        guard let answer = doc.child("Body") else { throw ONVIFError(.malformed, "\(op): the answer has no SOAP Body") }
        if let fault = answer.child("Fault") { throw Self.error(fault: fault, operation: op) }
        guard r.status == 200, let first = answer.children.first else {
            throw ONVIFError(.refused, "\(op): the camera answered HTTP \(r.status)")
        }
        return first
    }

    /// The request element's name, for messages ("GetProfiles").
    static func operation(_ body: String) -> String {
        let afterOpen = body.drop { $0 != ":" }.dropFirst()
        return String(afterOpen.prefix { $0.isLetter || $0.isNumber })
    }

    static func error(fault: XMLNode, operation op: String) -> ONVIFError {
        // SOAP 1.2: Code/Value, Code/Subcode/Value…, Reason/Text; SOAP 1.1 cameras: faultcode, faultstring.
        // Bounded: they go to logs and status, and a camera may send megabytes.
        let codes = (fault.all("Value").map(\.value) + fault.all("faultcode").map(\.value)).prefix(8).map {
            String($0.prefix(100))
        }
        let reason = String((fault.text("Reason", "Text") ?? fault.first("faultstring")?.value ?? "").prefix(200))
        if codes.contains(where: { $0.hasSuffix("NotAuthorized") }) {
            return ONVIFError(
                .notAuthorized,
                "the camera refused the user name or password (\(op): \(reason.isEmpty ? "NotAuthorized" : reason))")
        }
        // A lost subscription: in the Subcode, or (as many cameras send it) a WS-BaseFaults
        // ResourceUnknownFault in the Detail under a plain Receiver code (SOAP 1.1: detail).
        let detail = fault.child("Detail") ?? fault.child("detail")
        if codes.contains(where: { $0.hasSuffix("ResourceUnknownFault") || $0.hasSuffix("ResourceUnknown") })
            || detail?.first("ResourceUnknownFault") != nil
        {
            return ONVIFError(.subscriptionGone, "\(op): the camera no longer knows the subscription (\(reason))")
        }
        return ONVIFError(
            .refused, "\(op): the camera answered a fault \(codes.last ?? "")\(reason.isEmpty ? "" : ": \(reason)")")
    }

    /// Reads the camera's clock (GetSystemDateAndTime needs no authentication) and keeps its
    /// offset from ours for the digests: a camera refuses a token minutes off its clock.
    @discardableResult
    public func syncClock() throws -> Double {
        let sent = Date()
        let r = try call(deviceURL, "<tds:GetSystemDateAndTime/>", authenticated: false)
        let answered = Date()
        guard let utc = r.first("UTCDateTime"), let camera = Self.date(utc) else {
            throw ONVIFError(.malformed, "GetSystemDateAndTime: no UTCDateTime in the answer")
        }
        // The camera says whole seconds: its clock was somewhere in that second, on average
        // half-way, when it answered in the middle of our request.
        let off = camera.timeIntervalSince(sent.addingTimeInterval(answered.timeIntervalSince(sent) / 2)) + 0.5
        clockOffset = off
        return off
    }

    /// A tt:DateTime (Date Year/Month/Day, Time Hour/Minute/Second) in UTC.
    static func date(_ n: XMLNode) -> Date? {
        func int(_ name: String, _ range: ClosedRange<Int>) -> Int? {
            n.text(name).flatMap { Int($0) }.flatMap { range.contains($0) ? $0 : nil }
        }
        guard let y = int("Year", 1970...9999), let mo = int("Month", 1...12), let d = int("Day", 1...31),
            let h = int("Hour", 0...23), let mi = int("Minute", 0...59), let s = int("Second", 0...60)
        else { return nil }
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC") ?? .current
        return cal.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: s))
    }

    public struct DeviceInformation: Sendable, Equatable {
        public var manufacturer, model, firmware, serial: String
    }

    public func deviceInformation() throws -> DeviceInformation {
        let r = try call(deviceURL, "<tds:GetDeviceInformation/>")
        // Shown in status (to every user) and stored with it: bounded.
        func field(_ name: String) -> String { String((r.text(name) ?? "").prefix(128)) }
        return DeviceInformation(
            manufacturer: field("Manufacturer"), model: field("Model"), firmware: field("FirmwareVersion"),
            serial: field("SerialNumber"))
    }

    /// Where the camera's media and event services are.
    public struct Services: Sendable, Equatable {
        public var media: String
        public var events: String?
        /// The PTZ service, when the camera has one.
        public var ptz: String? = nil
    }

    /// GetCapabilities (every Profile S device has it); cameras that refuse it are asked
    /// GetServices.
    public func services() throws -> Services {
        do {
            let r = try call(deviceURL, "<tds:GetCapabilities><tds:Category>All</tds:Category></tds:GetCapabilities>")
            if let media = r.first("Media")?.text("XAddr"), !media.isEmpty {
                return Services(
                    media: media, events: r.first("Events")?.text("XAddr").flatMap { $0.isEmpty ? nil : $0 },
                    ptz: r.first("PTZ")?.text("XAddr").flatMap { $0.isEmpty ? nil : $0 })
            }
        } catch let e as ONVIFError where e.kind == .refused || e.kind == .malformed {
            // Not every camera answers GetCapabilities: GetServices below.
        }
        let r = try call(
            deviceURL, "<tds:GetServices><tds:IncludeCapability>false</tds:IncludeCapability></tds:GetServices>")
        var media: String?
        var events: String?
        var ptz: String?
        for s in r.all("Service") {
            let ns = s.text("Namespace") ?? ""
            let addr = s.text("XAddr") ?? ""
            if ns == SOAP.namespaces["trt"] { media = addr }
            if ns == SOAP.namespaces["tev"] { events = addr }
            if ns == SOAP.namespaces["tptz"] && !addr.isEmpty { ptz = addr }
        }
        guard let media, !media.isEmpty else {
            throw ONVIFError(.refused, "the camera offers no media service (not a Profile S camera?)")
        }
        return Services(media: media, events: events, ptz: ptz)
    }

    public struct MediaProfile: Sendable, Equatable {
        public var token: String
        public var name: String
        public var encoding: String
        public var width: Int
        public var height: Int
        /// The profile's PTZ configuration token: PTZ requests name a profile that has one.
        public var ptzConfiguration: String? = nil
        public var pixels: Int { width * height }
    }

    public func profiles(media: String) throws -> [MediaProfile] {
        let r = try call(media, "<trt:GetProfiles/>")
        // At most 32 profiles with short names: they are shown in status and error messages.
        return r.all("Profiles").prefix(32).compactMap { p in
            guard let token = p.attributes["token"], !token.isEmpty, token.count <= 64 else { return nil }
            let enc = p.first("VideoEncoderConfiguration")
            let w = enc?.first("Resolution")?.text("Width").flatMap { Int($0) } ?? 0
            let h = enc?.first("Resolution")?.text("Height").flatMap { Int($0) } ?? 0
            return MediaProfile(
                token: token, name: String((p.text("Name") ?? token).prefix(64)),
                encoding: String((enc?.text("Encoding") ?? "").prefix(16)),
                width: min(max(w, 0), 1 << 16), height: min(max(h, 0), 1 << 16),
                ptzConfiguration: p.first("PTZConfiguration")?.attributes["token"].flatMap {
                    $0.isEmpty || $0.count > 64 ? nil : $0
                })
        }
    }

    /// The RTSP URI of a profile (RTP over RTSP, unicast), as the camera gives it (no credentials).
    public func streamURI(media: String, profile: String) throws -> String {
        let r = try call(
            media,
            "<trt:GetStreamUri><trt:StreamSetup><tt:Stream>RTP-Unicast</tt:Stream><tt:Transport><tt:Protocol>RTSP</tt:Protocol>"
                + "</tt:Transport></trt:StreamSetup><trt:ProfileToken>\(SOAP.escape(profile))</trt:ProfileToken></trt:GetStreamUri>"
        )
        guard let uri = r.text("MediaUri", "Uri"), !uri.isEmpty else {
            throw ONVIFError(.malformed, "GetStreamUri: no Uri in the answer")
        }
        return uri
    }

    public func snapshotURI(media: String, profile: String) throws -> String {
        let r = try call(
            media,
            "<trt:GetSnapshotUri><trt:ProfileToken>\(SOAP.escape(profile))</trt:ProfileToken></trt:GetSnapshotUri>")
        guard let uri = r.text("MediaUri", "Uri"), !uri.isEmpty else {
            throw ONVIFError(.malformed, "GetSnapshotUri: no Uri in the answer")
        }
        return uri
    }
}
