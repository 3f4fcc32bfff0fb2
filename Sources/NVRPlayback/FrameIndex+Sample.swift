import NVRIndex
import NVRMedia

// The index's frame entries and the media layer's samples describe the same thing; the two
// leaf modules share no types, so the mapping lives here, once.

extension FrameIndex.Frame {
    package init(_ s: Sample) {
        self.init(duration: s.duration, size: s.size, isKey: s.isKey, compositionOffset: s.compositionOffset)
    }
}

extension Sample {
    package init(_ f: FrameIndex.Frame) {
        self.init(duration: f.duration, size: f.size, isKey: f.isKey, compositionOffset: f.compositionOffset)
    }
}

extension FrameIndex.Fragment {
    package init(_ f: FragmentInfo) { self.init(dataOffset: f.dataOffset, sampleCounts: f.sampleCounts) }
}

extension FragmentInfo {
    package init(_ f: FrameIndex.Fragment) { self.init(dataOffset: f.dataOffset, sampleCounts: f.sampleCounts) }
}
