import NVRMedia
import NVRPluginHost

/// How a camera session opens its live sources: the network (`LiveInputs.Network`) in the
/// product; a scripted input in tests, so a session runs in-process with packets it is handed.
public protocol LiveInputOpener: Sendable {
    func open(_ source: LiveSource, interrupter: Interrupter) throws -> any LiveInput
}

/// Opens a plugin's live source with the cheapest input that handles it.
public enum LiveInputs {
    /// What libavformat may open for a live source.
    static let networkProtocols = "rtsp,rtsps,rtp,srtp,udp,tcp,tls,rtmp,rtmps,rtmpt,http,https,httpproxy,hls,crypto"

    /// The native RTSP client for rtsp:// over TCP (the common camera case, and where
    /// libavformat costs the most CPU); libavformat for everything else, or when the camera's
    /// config asks for it (`client=libav`).
    /// `timeout`: seconds; nil = the source's own `timeout` option (microseconds, libavformat's
    /// unit, which the rtsp plugin sets from its documented `timeout` option), else 10 s.
    public static func open(_ source: LiveSource, timeout: Double? = nil, interrupter: Interrupter) throws
        -> any LiveInput
    {
        let timeout = timeout ?? optionTimeout(source) ?? 10
        let transport = source.options?["rtsp_transport"] ?? "tcp"
        if source.url.lowercased().hasPrefix("rtsp://") && transport == "tcp" && (source.client ?? "native") == "native"
        {
            return try RTSPClient(url: source.url, timeoutSeconds: timeout, interrupter: interrupter)
        }
        var options = source.options ?? [:]
        if source.url.lowercased().hasPrefix("rtsp") && options["rtsp_transport"] == nil {
            options["rtsp_transport"] = "tcp"
        }
        // Live URLs come from plugins and through them from cameras and vendor clouds: only
        // network protocols, never file:, concat:, subfile: or pipe: (which would read the
        // NVR's own files).
        options["protocol_whitelist"] = Self.networkProtocols
        return try Demuxer(
            Demuxer.Options(
                url: source.url, format: source.format, avOptions: options, timeoutSeconds: timeout,
                openTimeoutSeconds: source.listen == true ? 0 : nil, convertAudio: true),
            interrupter: interrupter)
    }

    /// The product's opener: `open(_:timeout:interrupter:)` with the source's own timeout.
    public struct Network: LiveInputOpener {
        public init() {}
        public func open(_ source: LiveSource, interrupter: Interrupter) throws -> any LiveInput {
            try LiveInputs.open(source, interrupter: interrupter)
        }
    }

    /// The source's `timeout` option in seconds, when it is a sane number of microseconds.
    static func optionTimeout(_ source: LiveSource) -> Double? {
        guard let text = source.options?["timeout"], let us = Double(text), us.isFinite, us >= 100_000,
            us <= 600_000_000
        else { return nil }
        return us / 1_000_000
    }
}
