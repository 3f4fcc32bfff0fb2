import Foundation
import PluginSupport
import TestSupport
import Testing

/// The mDNS reading behind GoPro discovery: queries as RFC 6762 asks, answers as an
/// independent implementation (python-zeroconf) writes them, and hostile datagrams from the
/// LAN ignored rather than crashed on.
@Suite struct DNSMessageTests {
    static let service = "_gopro-web._tcp.local."

    @Test func aQueryAsksOnceForThePTRWithAUnicastAnswer() {
        let q = DNSMessage.query(id: 0xbeef, name: Self.service, type: DNSMessage.typePTR)
        #expect(Array(q.prefix(12)) == [0xbe, 0xef, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(
            Array(q[12...]) == [10] + Array("_gopro-web".utf8) + [4] + Array("_tcp".utf8) + [5] + Array("local".utf8)
                + [0, 0, 12, 0x80, 1])
    }

    /// A GoPro's answer (PTR, SRV, A, compressed names) as python-zeroconf builds it.
    static func zeroconfAnswer() throws -> Data {
        let script = """
            import socket, sys
            from zeroconf import DNSOutgoing, DNSPointer, DNSService, DNSAddress, const
            out = DNSOutgoing(const._FLAGS_QR_RESPONSE | const._FLAGS_AA, multicast=False, id_=0x1234)
            out.add_answer_at_time(DNSPointer("_gopro-web._tcp.local.", const._TYPE_PTR, const._CLASS_IN, 120, "C3501324500789._gopro-web._tcp.local."), 0)
            out.add_additional_answer(DNSService("C3501324500789._gopro-web._tcp.local.", const._TYPE_SRV, const._CLASS_IN, 120, 0, 0, 8080, "C3501324500789.local."))
            out.add_additional_answer(DNSAddress("C3501324500789.local.", const._TYPE_A, const._CLASS_IN, 120, socket.inet_aton("10.0.0.7")))
            sys.stdout.write(out.packets()[0].hex())
            """
        let r = try runProcess(TestEnvironment.repoRoot + "/.build/test-venv/bin/python", ["-c", script])
        try #require(r.status == 0, "python-zeroconf: \(r.stderr) (run scripts/install-deps.sh test)")
        var bytes: [UInt8] = []
        var i = r.stdout.startIndex
        while i < r.stdout.endIndex, let j = r.stdout.index(i, offsetBy: 2, limitedBy: r.stdout.endIndex),
            let b = UInt8(r.stdout[i..<j], radix: 16)
        {
            bytes.append(b)
            i = j
        }
        return Data(bytes)
    }

    @Test func zeroconfsAnswerIsRead() throws {
        let (id, records) = try #require(DNSMessage.response(try Self.zeroconfAnswer()))
        #expect(id == 0x1234)
        #expect(
            records == [
                .init(
                    name: "_gopro-web._tcp.local.", type: DNSMessage.typePTR,
                    data: .ptr("C3501324500789._gopro-web._tcp.local.")),
                .init(
                    name: "C3501324500789._gopro-web._tcp.local.", type: DNSMessage.typeSRV,
                    data: .srv(port: 8080, target: "C3501324500789.local.")),
                .init(name: "C3501324500789.local.", type: DNSMessage.typeA, data: .a("10.0.0.7")),
            ])
    }

    @Test func hostileAnswersAreIgnoredNotCrashedOn() throws {
        let good = [UInt8](try Self.zeroconfAnswer())
        // Cut anywhere: nothing (or nothing past the cut) is read.
        for n in 0..<good.count { _ = DNSMessage.response(Data(good.prefix(n))) }
        #expect(DNSMessage.response(Data(good.prefix(good.count - 1))) == nil)
        let header: [UInt8] = [0, 1, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0]
        // A name that points at itself, and one that points forwards.
        #expect(DNSMessage.response(Data(header + [0xc0, 12, 0, 12, 0, 1, 0, 0, 0, 0, 0, 0])) == nil)
        #expect(DNSMessage.response(Data(header + [0xc0, 14, 0, 0, 12, 0, 1, 0, 0, 0, 0, 0, 0])) == nil)
        // A label longer than 63, a name longer than 255, an rdata length past the end.
        #expect(
            DNSMessage.response(
                Data(header + [64] + [UInt8](repeating: 97, count: 64) + [0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])) == nil)
        let long: [UInt8] = (0..<5).flatMap { _ -> [UInt8] in [63] + [UInt8](repeating: 97, count: 63) } + [0]
        #expect(DNSMessage.response(Data(header + long + [0, 1, 0, 1, 0, 0, 0, 0, 0, 0])) == nil)
        #expect(DNSMessage.response(Data(header + [0, 0, 1, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3])) == nil)
        // A query is not an answer.
        #expect(DNSMessage.response(Data(DNSMessage.query(id: 1, name: Self.service, type: DNSMessage.typePTR))) == nil)
        // Every byte flipped to every value never traps.
        for at in 0..<good.count {
            for v in stride(from: 0, through: 255, by: 5) {
                var m = good
                m[at] = UInt8(v)
                _ = DNSMessage.response(Data(m))
            }
        }
    }
}
