import Testing

extension Tag {
    /// Tests that run real parts: processes (GStreamer cameras, `nvr`, ffmpeg, Chromium, the
    /// Debian package), servers on loopback, network namespaces, real-time recording. `make test`
    /// runs everything else first, in-process and in seconds (scripts/test.sh).
    @Tag public static var system: Self
}
