#if canImport(Glibc)
    import Glibc
#endif

/// Walks a fragmented MP4 file box by box with positioned reads (never the whole file).
public enum SegmentScanner {
    public static func scan(path: String) throws -> ScannedSegment {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError.posix(.read, "cannot open \(path)", errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw MediaError.posix(.read, "cannot stat \(path)", errno) }
        let length = Int64(st.st_size)

        func read(_ offset: Int64, _ count: Int) -> [UInt8]? {
            guard count >= 0, offset + Int64(count) <= length else { return nil }
            var buf = [UInt8](repeating: 0, count: count)
            let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? buf : nil
        }
        func header(_ offset: Int64) -> (type: String, size: Int64, headerSize: Int)? {
            guard let h = read(offset, 8) else { return nil }
            let r = BoxReader(h)
            var size = Int64(r.u32(0))
            var hs = 8
            if size == 1 {
                guard let big = read(offset + 8, 8), let large = Int64(exactly: BoxReader(big).u64(0)) else {
                    return nil
                }
                size = large
                hs = 16
            }
            guard size >= Int64(hs), size <= length - offset else { return nil }
            return (String(decoding: h[4..<8], as: UTF8.self), size, hs)
        }

        // ftyp then moov (a few boxes at most; the init segment and each moof are small, so
        // one larger than `maxHeaderBytes` is damage, not something to read into memory).
        var at: Int64 = 0
        var initEnd: Int64 = 0
        var boxes = 0
        while boxes < 16, let h = header(at), h.type == "ftyp" || h.type == "moov" || h.type == "free" {
            at += h.size
            boxes += 1
            if h.type == "moov" {
                initEnd = at
                break
            }
        }
        guard initEnd > 0, initEnd <= maxHeaderBytes, let initBytes = read(0, Int(initEnd)) else {
            throw MediaError(.corrupt, "\(path): no complete init segment")
        }
        let r = BoxReader(initBytes)
        guard let moov = r.find(["moov"]) else { throw MediaError(.corrupt, "\(path): no moov") }
        var trackIDs: [UInt32] = []
        var timescales: [UInt32] = []
        for trak in r.children(from: moov.bodyOffset, to: moov.end) where trak.type == "trak" {
            guard let tkhd = r.find(["tkhd"], from: trak.bodyOffset, to: trak.end),
                let mdhd = r.find(["mdia", "mdhd"], from: trak.bodyOffset, to: trak.end)
            else { continue }
            trackIDs.append(r.trackID(tkhd: tkhd))
            timescales.append(r.timescale(mdhd: mdhd))
        }
        guard !trackIDs.isEmpty else { throw MediaError(.corrupt, "\(path): no tracks in its moov") }
        var result = ScannedSegment(
            initSegment: initBytes, validLength: initEnd, fileLength: length, fragments: [],
            samples: Array(repeating: [], count: trackIDs.count),
            firstDecodeTimes: Array(repeating: 0, count: trackIDs.count),
            trackIDs: trackIDs, timescales: timescales)
        var seen = Array(repeating: false, count: trackIDs.count)

        // moof + mdat pairs; stop at the first incomplete or unexpected box.
        while let moofHeader = header(at), moofHeader.type == "moof", moofHeader.size <= maxHeaderBytes,
            let mdatHeader = header(at + moofHeader.size), mdatHeader.type == "mdat",
            let moofBytes = read(at, Int(moofHeader.size))
        {
            let m = BoxReader(moofBytes)
            var counts = Array(repeating: 0, count: trackIDs.count)
            var fragmentSamples: [(Int, [Sample], UInt64)] = []
            var dataStart: Int64 = -1
            var ok = true
            for traf in m.children(from: moofHeader.headerSize, to: moofBytes.count) where traf.type == "traf" {
                guard let tfhd = m.find(["tfhd"], from: traf.bodyOffset, to: traf.end),
                    let trun = m.find(["trun"], from: traf.bodyOffset, to: traf.end),
                    let track = trackIDs.firstIndex(of: m.u32(tfhd.bodyOffset + 4))
                else {
                    ok = false
                    break
                }
                var decodeTime: UInt64 = 0
                if let tfdt = m.find(["tfdt"], from: traf.bodyOffset, to: traf.end) {
                    decodeTime =
                        m.u8(tfdt.bodyOffset) == 1 ? m.u64(tfdt.bodyOffset + 4) : UInt64(m.u32(tfdt.bodyOffset + 4))
                }
                guard let parsed = parseTrun(m, trun) else {
                    ok = false
                    break
                }
                if dataStart < 0 { dataStart = at + Int64(parsed.dataOffset) }
                counts[track] = parsed.samples.count
                fragmentSamples.append((track, parsed.samples, decodeTime))
            }
            guard ok else { break }
            for (track, samples, decodeTime) in fragmentSamples {
                if !seen[track] {
                    result.firstDecodeTimes[track] = decodeTime
                    seen[track] = true
                }
                result.samples[track].append(contentsOf: samples)
            }
            result.fragments.append(
                FragmentInfo(dataOffset: dataStart >= 0 ? dataStart : at + moofHeader.size + 8, sampleCounts: counts))
            at += moofHeader.size + mdatHeader.size
            result.validLength = at
        }
        return result
    }

    /// Largest init segment or moof read into memory (ours are a few KB; a moof of 64 MiB would
    /// describe millions of samples).
    static let maxHeaderBytes: Int64 = 64 << 20

    /// Reads a trun written with per-sample duration, size, flags and optional composition
    /// offsets; nil for one that is not of that shape (every trun we write has sizes).
    static func parseTrun(_ m: BoxReader, _ trun: BoxHeader) -> (dataOffset: Int32, samples: [Sample])? {
        let b = trun.bodyOffset
        guard trun.end - b >= 8 else { return nil }
        let flags = m.u32(b) & 0xFF_FFFF
        let count = Int(m.u32(b + 4))
        var i = b + 8
        var dataOffset: Int32 = 0
        if flags & 0x1 != 0 {
            dataOffset = Int32(bitPattern: m.u32(i))
            i += 4
        }
        if flags & 0x4 != 0 { i += 4 }
        let perSample = [0x100, 0x200, 0x400, 0x800].filter { flags & UInt32($0) != 0 }.count * 4
        guard flags & 0x200 != 0, i <= trun.end, count <= (trun.end - i) / perSample else { return nil }
        var samples: [Sample] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            var s = Sample(duration: 0, size: 0, isKey: true)
            if flags & 0x100 != 0 {
                s.duration = m.u32(i)
                i += 4
            }
            if flags & 0x200 != 0 {
                s.size = m.u32(i)
                i += 4
            }
            if flags & 0x400 != 0 {
                s.isKey = m.u32(i) & 0x0001_0000 == 0
                i += 4
            }
            if flags & 0x800 != 0 {
                s.compositionOffset = Int32(bitPattern: m.u32(i))
                i += 4
            }
            samples.append(s)
        }
        return (dataOffset, samples)
    }

    /// Cuts a file back to `length` bytes (the end of its last complete fragment).
    public static func truncate(path: String, to length: Int64) throws {
        guard Glibc.truncate(path, off_t(length)) == 0 else {
            throw MediaError.posix(.write, "cannot truncate \(path)", errno)
        }
    }
}
