import Foundation
import Testing

@testable import NVRIndex

@Suite struct FrameIndexTests {
    @Test func roundTripsTypicalVideo() throws {
        // 60 s of 25 fps with a key frame every 2 s and jittery sizes and durations.
        var frames: [FrameIndex.Frame] = []
        var rng = SystemRandomNumberGenerator()
        for i in 0..<1500 {
            let key = i % 50 == 0
            frames.append(
                FrameIndex.Frame(
                    duration: UInt32(3600 + Int.random(in: -30...30, using: &rng)),
                    size: UInt32(
                        key
                            ? 60_000 + Int.random(in: 0...5000, using: &rng)
                            : 15_000 + Int.random(in: 0...3000, using: &rng)),
                    isKey: key))
        }
        let data = FrameIndex.encode(frames)
        #expect(try FrameIndex.decode(data) == frames)
        // Compact: a few bytes a frame, far below the 12+ of a plain table.
        let perFrame = Double(data.count) / Double(frames.count)
        #expect(perFrame < 4.5, "bytes per frame: \(perFrame)")
    }

    @Test func steadyStreamIsAboutTwoBytesAFrame() throws {
        let frames = (0..<1500).map { i -> FrameIndex.Frame in
            let key = i % 50 == 0
            let size: Int = key ? 40_000 : 8000 + (i % 7) * 3
            return FrameIndex.Frame(duration: 3600, size: UInt32(size), isKey: key)
        }
        let data = FrameIndex.encode(frames)
        #expect(try FrameIndex.decode(data) == frames)
        #expect(Double(data.count) / 1500 <= 2.1)
    }

    @Test func keepsCompositionOffsets() throws {
        let frames = [
            FrameIndex.Frame(duration: 3000, size: 10, isKey: true, compositionOffset: 6000),
            FrameIndex.Frame(duration: 3000, size: 5, isKey: false, compositionOffset: -3000),
        ]
        #expect(try FrameIndex.decode(FrameIndex.encode(frames)) == frames)
    }

    @Test func rejectsTruncatedAndUnknownData() {
        let data = FrameIndex.encode([FrameIndex.Frame(duration: 300_000, size: 100_000, isKey: true)])
        #expect(throws: IndexError.self) { try FrameIndex.decode(data.prefix(data.count - 1)) }
        #expect(throws: IndexError.self) { try FrameIndex.decode(Data([9, 0])) }
    }

    @Test func fragmentsRoundTrip() throws {
        let f = [
            FrameIndex.Fragment(dataOffset: 1200, sampleCounts: [25, 47]),
            FrameIndex.Fragment(dataOffset: 900_000, sampleCounts: [25, 46]),
        ]
        #expect(try FrameIndex.decodeFragments(FrameIndex.encodeFragments(f, tracks: 2)) == f)
    }
}
