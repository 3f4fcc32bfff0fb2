import Foundation

/// An ONVIF camera's PTZ service (ONVIF PTZ Service Specification, ver20/ptz/wsdl), for one
/// media profile that carries a PTZ configuration: continuous moves bounded by a Timeout,
/// Stop, presets, absolute zoom and the current position. Speeds and positions are in the
/// generic spaces: pan, tilt and zoom speeds -1…1, zoom position 0…1.
public struct PTZService: Sendable {
    public let client: ONVIFClient
    public let url: String
    /// The media profile every request names.
    public let profile: String

    public init(client: ONVIFClient, url: String, profile: String) {
        self.client = client
        self.url = url
        self.profile = profile
    }

    /// What the profile's configuration says the camera can do.
    public struct Abilities: Sendable, Equatable {
        public var panTilt: Bool
        public var zoom: Bool
        public var absoluteZoom: Bool
        public init(panTilt: Bool, zoom: Bool, absoluteZoom: Bool) {
            self.panTilt = panTilt
            self.zoom = zoom
            self.absoluteZoom = absoluteZoom
        }
    }

    /// GetConfigurations: the configuration the profile uses (else the first), read for the
    /// default spaces it names.
    public func abilities(configuration token: String?) throws -> Abilities {
        let r = try call("<tptz:GetConfigurations/>")
        let all = r.all("PTZConfiguration")
        guard let c = all.first(where: { $0.attributes["token"] == token }) ?? all.first else {
            return Abilities(panTilt: false, zoom: false, absoluteZoom: false)
        }
        func has(_ name: String) -> Bool { c.first(name).map { !$0.value.isEmpty } ?? false }
        return Abilities(
            panTilt: has("DefaultContinuousPanTiltVelocitySpace") || c.first("PanTiltLimits") != nil,
            zoom: has("DefaultContinuousZoomVelocitySpace") || c.first("ZoomLimits") != nil,
            absoluteZoom: has("DefaultAbsoluteZoomPositionSpace"))
    }

    /// ContinuousMove at these speeds (each clamped to -1…1) for at most `seconds`, which the
    /// camera enforces (Timeout): a lost Stop cannot leave it turning.
    public func move(pan: Double, tilt: Double, zoom: Double, seconds: Double) throws {
        var velocity = ""
        if pan != 0 || tilt != 0 { velocity += "<tt:PanTilt x=\"\(Self.number(pan))\" y=\"\(Self.number(tilt))\"/>" }
        if zoom != 0 { velocity += "<tt:Zoom x=\"\(Self.number(zoom))\"/>" }
        let timeout = String(format: "PT%.1fS", min(max(seconds, 0.1), 60))
        _ = try call(
            "<tptz:ContinuousMove>\(token)<tptz:Velocity>\(velocity)</tptz:Velocity>"
                + "<tptz:Timeout>\(timeout)</tptz:Timeout></tptz:ContinuousMove>")
    }

    public func stop() throws {
        _ = try call(
            "<tptz:Stop>\(token)<tptz:PanTilt>true</tptz:PanTilt><tptz:Zoom>true</tptz:Zoom></tptz:Stop>")
    }

    public struct Preset: Sendable, Equatable {
        public var token: String
        public var name: String
    }

    /// GetPresets: at most 256, tokens and names of at most 64 characters (shown on the page).
    public func presets() throws -> [Preset] {
        let r = try call("<tptz:GetPresets>\(token)</tptz:GetPresets>")
        return r.all("Preset").prefix(256).compactMap { p in
            guard let t = p.attributes["token"], !t.isEmpty, t.unicodeScalars.count <= 64 else { return nil }
            let name = p.text("Name") ?? t
            return Preset(token: t, name: String(String.UnicodeScalarView(name.unicodeScalars.prefix(64))))
        }
    }

    public func goTo(preset: String) throws {
        _ = try call(
            "<tptz:GotoPreset>\(token)<tptz:PresetToken>\(SOAP.escape(preset))</tptz:PresetToken></tptz:GotoPreset>")
    }

    /// SetPreset: the current position saved under `name`, over `preset` when given; the
    /// camera's token for it.
    public func setPreset(name: String, preset: String?) throws -> String {
        let replace = preset.map { "<tptz:PresetToken>\(SOAP.escape($0))</tptz:PresetToken>" } ?? ""
        let r = try call(
            "<tptz:SetPreset>\(token)<tptz:PresetName>\(SOAP.escape(name))</tptz:PresetName>\(replace)</tptz:SetPreset>"
        )
        guard let t = r.text("PresetToken") ?? (r.name == "PresetToken" ? r.value : nil), !t.isEmpty,
            t.unicodeScalars.count <= 64
        else { throw ONVIFError(.malformed, "SetPreset: no PresetToken in the answer") }
        return t
    }

    /// AbsoluteMove of the zoom alone, to `zoom` (0…1).
    public func zoom(to zoom: Double) throws {
        _ = try call(
            "<tptz:AbsoluteMove>\(token)<tptz:Position><tt:Zoom x=\"\(Self.number(min(max(zoom, 0), 1)))\"/>"
                + "</tptz:Position></tptz:AbsoluteMove>")
    }

    public struct Position: Sendable, Equatable {
        public var pan: Double
        public var tilt: Double
        public var zoom: Double
    }

    /// GetStatus: where the camera points, when it says (many cameras leave Position out).
    public func position() throws -> Position? {
        let r = try call("<tptz:GetStatus>\(token)</tptz:GetStatus>")
        guard let p = r.first("Position") else { return nil }
        func value(_ v: String?) -> Double? { v.flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil } }
        let pt = p.first("PanTilt")
        let pan = value(pt?.attributes["x"])
        let tilt = value(pt?.attributes["y"])
        let zoom = value(p.first("Zoom")?.attributes["x"])
        // A zoom-only camera gives no PanTilt; one that gives neither says nothing.
        guard pan != nil || zoom != nil else { return nil }
        return Position(pan: pan ?? 0, tilt: tilt ?? 0, zoom: zoom ?? 0)
    }

    private var token: String { "<tptz:ProfileToken>\(SOAP.escape(profile))</tptz:ProfileToken>" }

    private func call(_ body: String) throws -> XMLNode { try client.call(url, body) }

    /// A speed or position for an attribute: finite, three decimals.
    static func number(_ v: Double) -> String {
        String(format: "%.3f", v.isFinite ? min(max(v, -1), 1) : 0)
    }
}
