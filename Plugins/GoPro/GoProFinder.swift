import Foundation
import GoProAPI
import PluginSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Discovery for the gopro plugin. A GoPro on a network (wired USB, or a home network)
/// announces itself by mDNS as `<serial>._gopro-web._tcp.local.`, which we ask for by a
/// legacy-unicast query; a camera whose access point this machine has joined sits at
/// 10.5.5.9, and one on a USB link at the .51 of that link's 172.2x.1yz.0/24. Every candidate
/// is confirmed by its own `GET /gopro/camera/info` on the HTTP port (8080) the plugin uses,
/// so only cameras the plugin can talk to are listed.
enum GoProFinder {
    static let service = "_gopro-web._tcp.local."
    static let httpPort = 8080

    static func discover(seconds: Double) throws -> String {
        let seconds = min(max(seconds, 0.2), 30)
        var candidates: [Candidate] = []
        let id = UInt16.random(in: 1...UInt16.max)
        var mdnsFailure: String?
        do {
            try MulticastQuery.ask(
                group: "224.0.0.251", port: 5353,
                message: DNSMessage.query(id: id, name: service, type: DNSMessage.typePTR),
                seconds: seconds
            ) { datagram, sender in
                for c in self.candidates(in: datagram, id: id, sender: sender)
                where !candidates.contains(where: { $0.address == c.address }) {
                    candidates.append(c)
                }
                return candidates.count < 32
            }
        } catch {
            mdnsFailure = "\(error)"
        }
        for a in linkAddresses() where !candidates.contains(where: { $0.address == a }) {
            candidates.append(Candidate(address: a, serial: nil))
        }
        // Nothing could be asked at all: say why rather than "nothing answered".
        if candidates.isEmpty, let mdnsFailure { throw PluginConfigError("mDNS: \(mdnsFailure)") }
        // Every candidate at once, for a few seconds at most: any host on the LAN can answer
        // mDNS, and addresses that never answer must not hold the discovery.
        let confirmed = Confirmed(count: min(candidates.count, 32))
        let group = DispatchGroup()
        for (i, c) in candidates.prefix(32).enumerated() {
            group.enter()
            Thread.detachNewThread {
                confirmed.set(i, confirm(c))
                group.leave()
            }
        }
        _ = group.wait(timeout: .now() + 4)
        var found: [[String: Any]] = []
        var seen: Set<String> = []
        for (i, c) in candidates.prefix(32).enumerated() {
            guard let camera = confirmed.get(i), seen.insert(camera["id"] as? String ?? c.address).inserted else {
                continue
            }
            found.append(camera)
        }
        return jsonText(["found": found])
    }

    /// The confirming threads' answers, by candidate.
    final class Confirmed: @unchecked Sendable {
        // @unchecked Sendable: `answers` is only touched under `lock`.
        private let lock = NSLock()
        private var answers: [[String: Any]?]
        init(count: Int) { answers = Array(repeating: nil, count: count) }
        func set(_ i: Int, _ answer: [String: Any]?) {
            lock.withLock { if answers.indices.contains(i) { answers[i] = answer } }
        }
        func get(_ i: Int) -> [String: Any]? { lock.withLock { answers.indices.contains(i) ? answers[i] : nil } }
    }

    /// An address to ask, with the serial number its mDNS instance name gave (if any).
    struct Candidate: Equatable {
        var address: String
        var serial: String?
    }

    /// The GoPro instances an mDNS answer names, each at the A record of its SRV target, or at
    /// the sender when the answer leaves those out.
    static func candidates(in datagram: Data, id: UInt16, sender: String) -> [Candidate] {
        guard let (answerID, records) = DNSMessage.response(datagram), answerID == id || answerID == 0 else {
            return []
        }
        func same(_ a: String, _ b: String) -> Bool { a.caseInsensitiveCompare(b) == .orderedSame }
        let instances = records.compactMap { r -> String? in
            guard r.type == DNSMessage.typePTR, same(r.name, service), case .ptr(let instance) = r.data else {
                return nil
            }
            return instance
        }
        return instances.prefix(32).map { instance in
            // "C3501324500789._gopro-web._tcp.local." names the camera by its serial number.
            let label = instance.split(separator: ".").first.map(String.init) ?? ""
            let serial =
                !label.isEmpty && label.count <= 32 && label.allSatisfy({ $0.isLetter || $0.isNumber }) ? label : nil
            for r in records where same(r.name, instance) {
                guard case .srv(_, let host) = r.data else { continue }
                for h in records where same(h.name, host) {
                    if case .a(let a) = h.data { return Candidate(address: a, serial: serial) }
                }
            }
            return Candidate(address: sender, serial: serial)
        }
    }

    /// Where a camera is when this machine is on its access point (10.5.5.9) or on a USB link
    /// to it (the .51 of a 172.16.0.0/12 /24 that the camera handed out).
    static func linkAddresses() -> [String] {
        var out: [String] = []
        for i in MulticastQuery.interfaces() {
            let a = UInt32(bigEndian: i.address.s_addr)
            let mask = UInt32(bigEndian: i.netmask.s_addr)
            if a & 0xffff_ff00 == 0x0a05_0500, a != 0x0a05_0509 { out.append("10.5.5.9") }
            if a & 0xfff0_0000 == 0xac10_0000, mask == 0xffff_ff00, a & 0xff != 51 {
                out.append(MulticastQuery.text(in_addr(s_addr: (a & 0xffff_ff00 | 51).bigEndian)))
            }
        }
        return out
    }

    /// The camera as the host's discovery list wants it, if it answers as an Open GoPro camera:
    /// `/gopro/camera/info` (HERO12 and later), else `/gopro/version` (every Open GoPro camera).
    static func confirm(_ c: Candidate) -> [String: Any]? {
        let base = "http://\(c.address):\(httpPort)"
        let client = HTTPClient(timeout: 1.5)
        var info: [String: Any] = [:]
        if let r = try? client.get(base + "/gopro/camera/info", maxBody: 64 << 10), r.status == 200 {
            info = (try? GoProAPI.object(r.body, from: "/gopro/camera/info")) ?? [:]
        }
        if info.isEmpty {
            guard let r = try? client.get(base + "/gopro/version", maxBody: 4096), r.status == 200,
                let v = try? GoProAPI.object(r.body, from: "/gopro/version"), v["version"] is String
            else { return nil }
        }
        func field(_ k: String) -> String? {
            guard let s = info[k] as? String, !s.isEmpty, s.count <= 64 else { return nil }
            return s
        }
        let serial = field("serial_number") ?? c.serial
        var options: [String: String] = ["base_url": base]
        if c.address == "10.5.5.9" {
            options = [:]  // the plugin's default address
        } else if let serial, let usb = try? GoProAPI.usbBaseURL(serial: serial), usb == base {
            options = ["connection": "usb", "serial": serial]
        }
        var o: [String: Any] = ["address": c.address, "options": options, "needs": [String]()]
        if let serial {
            o["id"] = serial
            // As the Open GoPro SDK names cameras: the serial number's last four digits.
            o["name"] = "GoPro \(serial.suffix(4))"
        }
        if let model = field("model_name") { o["model"] = model + (field("firmware_version").map { " (\($0))" } ?? "") }
        return o
    }
}
