/// One video frame as a self-contained fragment (moof + mdat) for Media Source Extensions:
/// live view sends every frame as soon as it arrives, so latency is a frame, not a GOP.
public enum LiveFragment {
    /// `decodeTime` and `duration` are in the track's timescale; `data` is the sample in MP4
    /// form (length-prefixed NAL units).
    public static func make(
        sequence: UInt32, trackID: UInt32, decodeTime: UInt64, duration: UInt32, compositionOffset: Int32,
        isKey: Bool, data: UnsafeRawBufferPointer
    ) -> [UInt8] {
        var w = BoxWriter(capacity: 128 + data.count)
        var dataOffsetAt = 0
        w.box("moof") { w in
            w.fullBox("mfhd", version: 0, flags: 0) { $0.u32(sequence) }
            w.box("traf") { w in
                // default-base-is-moof: the data offset counts from this moof's first byte.
                w.fullBox("tfhd", version: 0, flags: 0x020000) { $0.u32(trackID) }
                w.fullBox("tfdt", version: 1, flags: 0) { $0.u64(decodeTime) }
                // data offset, duration, size, flags, composition offset.
                w.fullBox("trun", version: 1, flags: 0x000001 | 0x000100 | 0x000200 | 0x000400 | 0x000800) { w in
                    w.u32(1)
                    dataOffsetAt = w.count
                    w.i32(0)
                    w.u32(duration)
                    w.u32(UInt32(clamping: data.count))
                    w.u32(isKey ? 0x0200_0000 : 0x0101_0000)
                    w.i32(compositionOffset)
                }
            }
        }
        let moofSize = w.count
        w.patchU32(at: dataOffsetAt, UInt32(moofSize + 8))
        w.u32(UInt32(clamping: 8 + data.count))
        w.fourcc("mdat")
        w.append(data)
        return w.bytes
    }
}
