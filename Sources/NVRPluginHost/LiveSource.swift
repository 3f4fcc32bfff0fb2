/// The live input a URL plugin asks the host to open.
public struct LiveSource: Sendable, Decodable {
    public var url: String
    public var format: String?
    public var options: [String: String]?
    /// "native" (default) or "libav": which RTSP client opens rtsp:// over TCP.
    public var client: String?
    /// True when the host listens and the camera connects to it (RTMP push): opening waits
    /// for the camera with no deadline, and the host listens again at once after a disconnect.
    public var listen: Bool?
    public init(
        url: String, format: String? = nil, options: [String: String]? = nil, client: String? = nil, listen: Bool? = nil
    ) {
        self.url = url
        self.format = format
        self.options = options
        self.client = client
        self.listen = listen
    }
}
