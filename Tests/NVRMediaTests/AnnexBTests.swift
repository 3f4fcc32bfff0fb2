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
