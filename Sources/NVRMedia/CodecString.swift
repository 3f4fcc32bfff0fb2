/// RFC 6381 codec strings from sample entries, for people and for browsers (MSE).
public enum CodecString {
    public static func rfc6381(sampleEntry e: [UInt8]) -> String {
        guard e.count >= 8 else { return "unknown" }
        let type = String(decoding: e[4..<8], as: UTF8.self)
        let r = BoxReader(e)
        switch type {
        case "avc1", "avc3":
            // Visual sample entry: 8 header + 78 bytes, then child boxes.
            guard let avcC = r.children(from: 86, to: e.count).first(where: { $0.type == "avcC" }),
                avcC.size >= 12
            else { return type }
            let b = avcC.bodyOffset
            return type + "." + hex(e[b + 1]) + hex(e[b + 2]) + hex(e[b + 3])
        case "hev1", "hvc1":
            guard let hvcC = r.children(from: 86, to: e.count).first(where: { $0.type == "hvcC" }),
                hvcC.size >= 8 + 13
            else { return type }
            let b = hvcC.bodyOffset
            let space = e[b + 1] >> 6
            let tier = (e[b + 1] >> 5) & 1
            let profile = e[b + 1] & 0x1F
            let compat = r.u32(b + 2)
            let level = e[b + 12]
            let spaceLetter = ["", "A", "B", "C"][Int(space)]
            var s =
                "\(type).\(spaceLetter)\(profile).\(String(compat.bitReversed, radix: 16, uppercase: true)).\(tier == 1 ? "H" : "L")\(level)"
            // Constraint flags: six bytes, trailing zero bytes omitted.
            var constraints = Array(e[(b + 6)..<(b + 12)])
            while let last = constraints.last, last == 0 { constraints.removeLast() }
            for c in constraints { s += "." + String(c, radix: 16, uppercase: true) }
            return s
        case "mp4a":
            // Audio sample entry: 8 header + 28 bytes, then esds.
            guard let esds = r.children(from: 36, to: e.count).first(where: { $0.type == "esds" }),
                let aot = audioObjectType(Array(e[esds.bodyOffset..<esds.end]))
            else { return "mp4a.40.2" }
            return "mp4a.40.\(aot)"
        default:
            return type
        }
    }

    /// Finds the DecoderSpecificInfo (tag 5) in an esds body and returns its audio object type.
    static func audioObjectType(_ esds: [UInt8]) -> Int? {
        var i = 4  // version + flags
        while i < esds.count {
            let tag = esds[i]
            i += 1
            var len = 0
            for _ in 0..<4 {
                guard i < esds.count else { return nil }
                let b = esds[i]
                i += 1
                len = len << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { break }
            }
            switch tag {
            case 3: i += 3  // ES_DescrTag: ES_ID + flags, then children
            case 4: i += 13  // DecoderConfigDescrTag: fixed part, then children
            case 5: return i < esds.count ? Int(esds[i] >> 3) : nil
            default: i += len
            }
        }
        return nil
    }

    static func hex(_ b: UInt8) -> String {
        let s = String(b, radix: 16)
        return s.count == 1 ? "0" + s : s
    }
}

extension UInt32 {
    var bitReversed: UInt32 {
        var v = self
        var r: UInt32 = 0
        for _ in 0..<32 {
            r = r << 1 | (v & 1)
            v >>= 1
        }
        return r
    }
}
