import NVRMedia

/// Opens a plugin's live source with the cheapest input that handles it.
public enum LiveInputs {
    /// What libavformat may open for a live source.
    static let networkProtocols = "rtsp,rtsps,rtp,srtp,udp,tcp,tls,rtmp,rtmps,rtmpt,http,https,httpproxy,hls,crypto"

    /// The native RTSP client for rtsp:// over TCP (the common camera case, and where
    /// libavformat costs the most CPU); libavformat for everything else, or when the camera's
    /// config asks for it (`client=libav`).
    public static func open(_ source: LiveSource, timeout: Double = 10, interrupter: Interrupter) throws -> any LiveInput {
        let transport = source.options?["rtsp_transport"] ?? "tcp"
        if source.url.lowercased().hasPrefix("rtsp://") && transport == "tcp" && (source.client ?? "native") == "native" {
            return try RTSPClient(url: source.url, timeoutSeconds: timeout, interrupter: interrupter)
        }
        var options = source.options ?? [:]
        if source.url.lowercased().hasPrefix("rtsp") && options["rtsp_transport"] == nil { options["rtsp_transport"] = "tcp" }
        // Live URLs come from plugins and through them from cameras and vendor clouds: only
        // network protocols, never file:, concat:, subfile: or pipe: (which would read the
        // NVR's own files).
        options["protocol_whitelist"] = Self.networkProtocols
        return try Demuxer(Demuxer.Options(url: source.url, format: source.format, avOptions: options, timeoutSeconds: timeout,
                                           openTimeoutSeconds: source.listen == true ? 0 : nil),
                           interrupter: interrupter)
    }
}
