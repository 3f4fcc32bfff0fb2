import Foundation
import GoProAPI
import Insta360API
import NVRPluginHost
import NVRRecorder
import NVRTime
import PluginSupport
import TuyaAPI

extension FuzzTargets {
    /// What plugins hand the host as JSON: events, card listings, live sources, status.
    static let pluginJSON: Target = { data in
        let json = text(Array(data))
        let now: Int64 = 1_795_000_000 * 90_000
        if let e = try? PluginEvent(json: json, now: now) {
            precondition(Time90k.subtract(e.time90k, now).magnitude <= 600 * 90_000 && e.quiet90k > 0)
        }
        if let listing = try? CardListing(json: json, now90k: now) {
            for item in listing.items {
                precondition(
                    Time90k.isSupported(item.start90k) && Time90k.isSupported(item.end90k)
                        && item.start90k <= item.end90k && item.bytes >= 0)
            }
        }
        if let v = try? JSONValue(text: json) {
            _ = v[text: "summary"]
            _ = try? JSONEncoder().encode(v)
        }
        _ = try? JSONDecoder().decode(LiveSource.self, from: Data(json.utf8))
    }

    /// GoPro's answers (state, date/time, media list and info), then the card spans built
    /// from a list and the info of each of its videos.
    static let goproJSON: Target = { data in
        let parts = pieces(data).map { Data($0) }
        _ = try? GoProState(json: parts[0])
        _ = try? GoProDateTime(json: parts[0])
        _ = GoProFileName(text(Array(parts[0])))
        guard let list = try? GoProMediaList(json: parts[0]) else { return }
        let infos = parts.dropFirst().compactMap { try? GoProMediaInfo(json: $0) }
        guard !infos.isEmpty else { return }
        let videos = list.items.prefix(64).enumerated().map { (item: $0.element, info: infos[$0.offset % infos.count]) }
        for v in GoProCardVideo.spans(videos) {
            precondition(v.durationSeconds >= 0 && GoProAPI.plausibleTime(v.startLocal + v.durationSeconds))
        }
    }

    /// OSC answers as an Insta360 camera gives them, file names and capture times.
    static let oscJSON: Target = { data in
        let d = Data(data)
        _ = try? OSCCommandResult(json: d, command: "camera.listFiles")
        _ = try? OSCState(json: d)
        if let o = try? OSC.object(d, from: "fuzz") {
            _ = OSCOptions(results: o)
            if let page = try? OSCFilePage(results: o) {
                for e in page.entries {
                    _ = e.path
                    _ = Insta360FileName(e.name)
                    _ = Insta360CardVideo.span(dateTimeZone: e.dateTimeZone, duration: 10)
                }
            }
        }
        let s = text(Array(data))
        _ = OSC.parseDateTimeZone(s)
        _ = Insta360FileName(s)
    }

    /// A card file's header read the way the Insta360 plugin reads it: ranges served from
    /// the input; no more than a few hundred reads, none outside the file.
    static let mp4Header: Target = { data in
        let bytes = Array(data)
        var reads = 0
        _ = try? MP4Header.duration(size: Int64(bytes.count)) { offset, length in
            reads += 1
            precondition(reads <= 400 && offset >= 0 && length >= 0 && offset < Int64(bytes.count))
            let start = Int(offset)
            let end = min(bytes.count, start + length)
            return Array(bytes[start..<end])
        }
    }

    /// Tuya LAN frames (3.3 and 3.4, from the device) with a fixed key, their payloads, and
    /// the data points inside.
    static let tuyaLAN: Target = { data in
        let key = Data("0123456789abcdef".utf8)
        let buffer = Data(data)
        for version in [TuyaLAN.Version.v33, .v34] {
            var rest = buffer
            var frames = 0
            while frames < 64,
                let (frame, consumed) = try? TuyaLAN.decode(rest, version: version, integrityKey: key, fromDevice: true)
            {
                precondition(consumed > 0 && consumed <= rest.count)
                rest = rest.dropFirst(consumed)
                frames += 1
                if let plain = try? TuyaLAN.open(frame.payload, version: version, key: key) {
                    _ = TuyaLANClient.dataPoints(plain)
                }
            }
        }
        _ = TuyaLANClient.dataPoints(buffer)?.values.map(\.description)
        _ = try? TuyaSession.finish(response: buffer, localNonce: Data(repeating: 1, count: 16), localKey: key)
    }

    /// A camera's HTTP answer as the plugins' client reads it (status line, headers, chunked
    /// or sized body), over a socket pair.
    static let httpResponse: Target = { data in
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { return }
        var size = 1 << 20
        setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int>.size))
        let written = data.isEmpty ? 0 : send(fds[1], data.baseAddress, data.count, Int32(MSG_NOSIGNAL))
        close(fds[1])
        guard written == data.count else {
            close(fds[0])
            return
        }
        let conn = TCPConnection(connected: fds[0], peer: "camera", timeout: 1)
        defer { conn.close() }
        var received = 0
        _ = try? HTTPClient(timeout: 1).readResponse(
            conn, method: "GET",
            sink: { chunk in
                received += chunk.count
                return received <= data.count
            })
        precondition(received <= data.count)
    }
}
