import Foundation
import Testing

@testable import NVRCluster

/// What the nodes accept from each other's HTTP answers (PeerHTTP, PeerFootage): a reply is
/// hostile input like any other.
@Suite struct PeerHTTPTests {
    func reply(_ text: String, body: [UInt8] = []) -> [UInt8] { Array(text.utf8) + body }

    @Test func aReplyIsTakenOnlyWhenWhole() {
        let ok = PeerHTTP.parse(
            reply(
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-2/10\r\nContent-Length: 3\r\n\r\n",
                body: [1, 2, 3]),
            limit: 100)
        #expect(ok?.status == 206 && ok?.body == [1, 2, 3] && ok?.headers["content-range"] == "bytes 0-2/10")
        // A body shorter or longer than its Content-Length, or over the limit; chunked encoding;
        // no end of headers; no status line; a header line without a colon.
        #expect(
            PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n", body: [1, 2, 3]), limit: 100) == nil)
        #expect(
            PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", body: [1, 2, 3]), limit: 100) == nil)
        #expect(
            PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", body: [1, 2, 3]), limit: 2) == nil)
        #expect(PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\n\r\n", body: [1, 2, 3]), limit: 2) == nil)
        #expect(
            PeerHTTP.parse(
                reply("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), limit: 100)
                == nil)
        #expect(PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"), limit: 100) == nil)
        #expect(PeerHTTP.parse(reply("hello\r\n\r\n"), limit: 100) == nil)
        #expect(PeerHTTP.parse(reply("HTTP/1.1 999 What\r\n\r\n"), limit: 100) == nil)
        #expect(PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\nbroken header\r\n\r\n"), limit: 100) == nil)
        #expect(PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"), limit: 100) == nil)
        #expect(
            PeerHTTP.parse(reply("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"), limit: 100) == nil)
    }

    @Test func anAnswerAboutPostgreSQLNamesTheNode() {
        func answer(_ json: String, status: Int = 200) -> PeerQuestion.Answer? {
            PeerQuestion.parse(PeerHTTP.Reply(status: status, headers: [:], body: Array(json.utf8)))
        }
        #expect(answer(#"{"node":"b","index":"reachable"}"#) == .init(node: "b", reachesIndex: true))
        #expect(answer(#"{"node":"b","index":"unreachable"}"#) == .init(node: "b", reachesIndex: false))
        #expect(
            answer(#"{"node":"b","index":"reachable","cameras":[3,1]}"#)
                == .init(node: "b", reachesIndex: true, cameras: [1, 3]))
        #expect(answer(#"{"node":"b","index":"reachable","cameras":["x"]}"#) == nil)
        #expect(answer(#"{"node":"b","index":"maybe"}"#) == nil)
        #expect(answer(#"{"index":"reachable"}"#) == nil)
        #expect(answer(#"{"node":"b","index":"reachable"}"#, status: 404) == nil)
        #expect(answer("not json") == nil)
    }

    @Test func contentRangesAreChecked() {
        #expect(PeerFootage.contentRange("bytes 0-99/100")! == (0, 99, 100))
        #expect(PeerFootage.contentRange("bytes 5-4/100") == nil)
        #expect(PeerFootage.contentRange("bytes 0-100/100") == nil)
        #expect(PeerFootage.contentRange("bytes -1-4/100") == nil)
        #expect(PeerFootage.contentRange("bytes */100") == nil)
        #expect(PeerFootage.contentRange("items 0-1/2") == nil)
        #expect(PeerFootage.contentRange("bytes 0-1/99999999999999999999") == nil)
    }

    /// Over TLS a reply must say its length: a peer may close without TLS's close_notify, so
    /// the end of the connection does not say the body is whole.
    @Test func aTLSReplyMustSayItsLength() {
        let bare = reply("HTTP/1.1 200 OK\r\n\r\n", body: [1, 2, 3])
        #expect(PeerHTTP.parse(bare, limit: 10)?.body == [1, 2, 3])
        #expect(PeerHTTP.parse(bare, limit: 10, needsLength: true) == nil)
        let sized = reply("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", body: [1, 2, 3])
        #expect(PeerHTTP.parse(sized, limit: 10, needsLength: true)?.body == [1, 2, 3])
    }
}
