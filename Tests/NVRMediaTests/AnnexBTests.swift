import Testing

@testable import NVRMedia

@Suite struct AnnexBTests {
    @Test func convertsStartCodesToLengthPrefixes() {
        let input: [UInt8] = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 9, 9, 9]
        var out: [UInt8] = []
        let n = input.withUnsafeBytes { AnnexB.appendLengthPrefixed($0, to: &out) }
        #expect(out == [0, 0, 0, 3, 0x67, 1, 2, 0, 0, 0, 2, 0x68, 3, 0, 0, 0, 4, 0x65, 9, 9, 9])
        #expect(n == out.count)
    }

    @Test func findsParameterSets() {
        let frame: [UInt8] = [0, 0, 0, 1, 0x67, 1, 0, 0, 0, 1, 0x68, 2, 0, 0, 0, 1, 0x65, 7, 7]
        let ps = frame.withUnsafeBytes { ParameterSets.annexB(from: $0, codec: .h264) }
        #expect(ps == [0, 0, 0, 1, 0x67, 1, 0, 0, 0, 1, 0x68, 2])
    }
}

@Suite struct AnnexBEdgeCaseTests {
    func convert(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        input.withUnsafeBytes { _ = AnnexB.appendLengthPrefixed($0, to: &out) }
        return out
    }

    @Test func startCodesAtEveryAlignment() {
        // The scan skips ahead by three bytes; start codes must be found at any offset.
        for pad in 0..<6 {
            let payload = [UInt8](repeating: 7, count: pad) + [2, 3]
            let input: [UInt8] = [0, 0, 1, 0x65] + payload + [0, 0, 1, 0x41, 9] + [0, 0, 0, 1, 0x41, 8, 0]
            #expect(
                convert(input) == [0, 0, 0, UInt8(1 + payload.count), 0x65] + payload + [
                    0, 0, 0, 2, 0x41, 9, 0, 0, 0, 2, 0x41, 8,
                ], "pad \(pad)")
        }
    }

    @Test func packetWithoutStartCodeIsOneNAL() {
        #expect(convert([0x65, 1, 2]) == [0, 0, 0, 3, 0x65, 1, 2])
        #expect(convert([]) == [])
    }

    @Test func matchesAByteByByteScanOnRandomData() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var input: [UInt8] = [0, 0, 0, 1]
            for _ in 0..<Int.random(in: 1...300, using: &rng) {
                let r = Int.random(in: 0..<20, using: &rng)
                input.append(r < 6 ? 0 : (r < 8 ? 1 : UInt8.random(in: 2...255, using: &rng)))
            }
            // Reference: split at every 00 00 01, strip trailing zeros, length-prefix.
            var ref: [UInt8] = []
            var starts: [Int] = []
            var i = 0
            while i + 2 < input.count {
                if input[i] == 0 && input[i + 1] == 0 && input[i + 2] == 1 {
                    starts.append(i)
                    i += 3
                } else {
                    i += 1
                }
            }
            for (k, s) in starts.enumerated() {
                var e = k + 1 < starts.count ? starts[k + 1] : input.count
                while e > s + 3 && input[e - 1] == 0 { e -= 1 }
                let nal = Array(input[(s + 3)..<e])
                if nal.isEmpty { continue }
                let n = UInt32(nal.count)
                ref += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + nal
            }
            #expect(convert(input) == ref)
        }
    }
}
