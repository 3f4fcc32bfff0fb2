import Foundation

/// One media section of an SDP description, as much as the recorder needs.
package struct SDPMedia {
    package var kind: String  // "video", "audio"
    package var payloadType: Int
    package var encoding: String  // "H264", "H265", "MPEG4-GENERIC", ...
    package var clockRate: Int
    package var channels: Int
    package var fmtp: [String: String]  // keys lower-cased
    package var control: String
    package var frameRate: Double?
    /// a=sendonly, recvonly, sendrecv or inactive, as the camera wrote it (nil: none given). In
    /// an ONVIF back-channel answer the audio the camera takes is marked sendonly (the client
    /// sends).
    package var direction: String? = nil

    package init(
        kind: String, payloadType: Int, encoding: String, clockRate: Int, channels: Int, fmtp: [String: String],
        control: String, frameRate: Double?
    ) {
        self.kind = kind
        self.payloadType = payloadType
        self.encoding = encoding
        self.clockRate = clockRate
        self.channels = channels
        self.fmtp = fmtp
        self.control = control
        self.frameRate = frameRate
    }
}

package enum SDP {
    package static func parse(_ text: String) -> (control: String?, media: [SDPMedia]) {
        var sessionControl: String?
        var media: [SDPMedia] = []
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = String(raw)
            if line.hasPrefix("m=") {
                let f = line.dropFirst(2).split(separator: " ")
                let pt = f.count > 3 ? Int(f[3]) ?? -1 : -1
                // RFC 3551's static payload types need no rtpmap, and cameras often send none.
                let known: (String, Int)? = pt == 0 ? ("PCMU", 8000) : pt == 8 ? ("PCMA", 8000) : nil
                media.append(
                    SDPMedia(
                        kind: f.first.map(String.init) ?? "", payloadType: pt,
                        encoding: known?.0 ?? "", clockRate: known?.1 ?? 0, channels: 1, fmtp: [:], control: "",
                        frameRate: nil))
                continue
            }
            guard line.hasPrefix("a=") else { continue }
            let attr = line.dropFirst(2)
            if media.isEmpty {
                if attr.hasPrefix("control:") { sessionControl = String(attr.dropFirst(8)) }
                continue
            }
            var m = media[media.count - 1]
            if attr.hasPrefix("rtpmap:") {
                // rtpmap:96 H264/90000[/channels]
                let parts = attr.dropFirst(7).split(separator: " ", maxSplits: 1)
                if parts.count == 2, Int(parts[0]) == m.payloadType {
                    let enc = parts[1].split(separator: "/")
                    m.encoding = enc.first.map { $0.uppercased() } ?? ""
                    m.clockRate = enc.count > 1 ? Int(enc[1]) ?? 0 : 0
                    m.channels = enc.count > 2 ? Int(enc[2]) ?? 1 : 1
                }
            } else if attr.hasPrefix("fmtp:") {
                let parts = attr.dropFirst(5).split(separator: " ", maxSplits: 1)
                if parts.count == 2 {
                    for kv in parts[1].split(separator: ";") {
                        let pair = kv.split(separator: "=", maxSplits: 1)
                        guard pair.count == 2 else { continue }
                        m.fmtp[pair[0].trimmingCharacters(in: .whitespaces).lowercased()] = pair[1].trimmingCharacters(
                            in: .whitespaces)
                    }
                }
            } else if attr.hasPrefix("control:") {
                m.control = String(attr.dropFirst(8))
            } else if ["sendonly", "recvonly", "sendrecv", "inactive"].contains(attr) {
                m.direction = String(attr)
            } else if attr.hasPrefix("framerate:") {
                m.frameRate = Double(attr.dropFirst(10).trimmingCharacters(in: .whitespaces)).flatMap {
                    $0.isFinite && $0 > 0 && $0 <= 1000 ? $0 : nil
                }
            }
            media[media.count - 1] = m
        }
        return (sessionControl, media)
    }

    /// Annex B parameter sets from base64 lists (sprop-parameter-sets, sprop-vps/sps/pps).
    package static func parameterSets(_ lists: [String?]) -> [UInt8] {
        var out: [UInt8] = []
        for list in lists.compactMap({ $0 }) {
            for b64 in list.split(separator: ",") {
                var s = String(b64)
                while s.count % 4 != 0 { s += "=" }
                if let d = Data(base64Encoded: s), !d.isEmpty { out += [0, 0, 0, 1] + d }
            }
        }
        return out
    }

    package static func hexBytes(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = s.makeIterator()
        while let a = it.next(), let b = it.next() {
            guard let v = UInt8(String([a, b]), radix: 16) else { return [] }
            out.append(v)
        }
        return out
    }
}
