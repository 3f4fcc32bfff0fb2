import Crypto
import Foundation
import _CryptoExtras

/// Tuya's local LAN protocol (TCP 6668), versions 3.3 and 3.4, as tinytuya's PROTOCOL.md
/// describes it (PROTOCOLS.md): framing, payload encryption and the 3.4 session key.
///
///     000055AA | seq u32 | cmd u32 | len u32 | [retcode u32, device → client] | payload
///              | CRC32 (3.3) or HMAC-SHA256 (3.4) of everything before it | 0000AA55
///
/// `len` counts from the retcode (or payload) through the suffix. All big-endian.
public enum TuyaLAN {
    public enum Version: String, Sendable { case v33 = "3.3", v34 = "3.4" }

    public enum Command: UInt32, Sendable {
        case sessionKeyStart = 3, sessionKeyResponse = 4, sessionKeyFinish = 5
        case control = 7, status = 8, heartBeat = 9, dpQuery = 10, controlNew = 13, dpQueryNew = 16, updateDPs = 18
    }

    public static let prefix: UInt32 = 0x0000_55AA
    public static let suffix: UInt32 = 0x0000_AA55
    /// Longest payload accepted: device answers are JSON of a few hundred bytes.
    public static let maxLength = 64 << 10

    public struct Frame: Sendable, Equatable {
        public var seq: UInt32
        public var command: UInt32
        public var retcode: UInt32?
        public var payload: Data
        public init(seq: UInt32, command: UInt32, retcode: UInt32? = nil, payload: Data) {
            self.seq = seq
            self.command = command
            self.retcode = retcode
            self.payload = payload
        }
    }

    /// A frame that cannot be used; `skip` bytes of the buffer are dropped to find the next one.
    public struct FrameError: Error, CustomStringConvertible, Sendable {
        public enum Kind: Sendable { case badPrefix, oversized, badSuffix, badCRC, badHMAC }
        public let kind: Kind
        public let skip: Int
        public let description: String
    }

    /// The bytes of one frame; `integrityKey` is the HMAC key for 3.4 (local or session key).
    public static func encode(_ f: Frame, version: Version, integrityKey: Data) -> Data {
        let tail = version == .v33 ? 4 : 32
        var out = Data()
        out.reserveCapacity(24 + f.payload.count + tail)
        append32(&out, prefix)
        append32(&out, f.seq)
        append32(&out, f.command)
        append32(&out, UInt32((f.retcode == nil ? 0 : 4) + f.payload.count + tail + 4))
        if let r = f.retcode { append32(&out, r) }
        out.append(f.payload)
        if version == .v33 {
            append32(&out, crc32(out))
        } else {
            out.append(contentsOf: HMAC<SHA256>.authenticationCode(for: out, using: SymmetricKey(data: integrityKey)))
        }
        append32(&out, suffix)
        return out
    }

    /// Reads one frame from the front of `buffer`: nil while more bytes are needed, the frame
    /// and how many bytes it took, or a FrameError saying how many bytes to drop.
    public static func decode(_ buffer: Data, version: Version, integrityKey: Data, fromDevice: Bool) throws -> (
        frame: Frame, consumed: Int
    )? {
        let b = [UInt8](buffer.prefix(16))
        guard b.count >= 4 else { return nil }
        guard be32(b, 0) == prefix else {
            let next = findPrefix(buffer, from: 1)
            throw FrameError(
                kind: .badPrefix, skip: next, description: "no frame start (000055AA); skipped \(next) bytes")
        }
        guard b.count >= 16 else { return nil }
        let length = Int(be32(b, 12))
        let tail = version == .v33 ? 4 : 32
        let minimum = (fromDevice ? 4 : 0) + tail + 4
        guard length >= minimum, length <= maxLength else {
            throw FrameError(
                kind: .oversized, skip: findPrefix(buffer, from: 1),
                description: "frame length \(length) outside \(minimum)…\(maxLength)")
        }
        let total = 16 + length
        guard buffer.count >= total else { return nil }
        let frame = [UInt8](buffer.prefix(total))
        guard be32(frame, total - 4) == suffix else {
            throw FrameError(
                kind: .badSuffix, skip: findPrefix(buffer, from: 1), description: "frame does not end in 0000AA55")
        }
        let body = Data(frame[0..<(total - 4 - tail)])
        if version == .v33 {
            guard crc32(body) == be32(frame, total - 8) else {
                throw FrameError(kind: .badCRC, skip: total, description: "frame CRC does not match")
            }
        } else {
            let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: integrityKey))
            guard Data(mac) == Data(frame[(total - 36)..<(total - 4)]) else {
                throw FrameError(
                    kind: .badHMAC, skip: total,
                    description: "frame HMAC does not match (wrong key, or a damaged frame)")
            }
        }
        var start = 16
        var retcode: UInt32?
        if fromDevice {
            retcode = be32(frame, 16)
            start = 20
        }
        let payload = Data(frame[start..<(total - 4 - tail)])
        return (Frame(seq: be32(frame, 4), command: be32(frame, 8), retcode: retcode, payload: payload), total)
    }

    /// Commands whose 3.3 payload carries no "3.3" version header.
    public static func hasVersionHeader(_ command: UInt32, version: Version) -> Bool {
        let bare: Set<UInt32> =
            version == .v33
            ? [Command.dpQuery.rawValue, Command.heartBeat.rawValue, Command.updateDPs.rawValue]
            : [
                Command.dpQuery.rawValue, Command.dpQueryNew.rawValue, Command.heartBeat.rawValue,
                Command.updateDPs.rawValue,
                Command.sessionKeyStart.rawValue, Command.sessionKeyResponse.rawValue,
                Command.sessionKeyFinish.rawValue,
            ]
        return !bare.contains(command)
    }

    /// A JSON payload ready for a frame: 3.3 encrypts then puts "3.3" + 12 zero bytes in front;
    /// 3.4 puts "3.4" + 12 zero bytes in front, then encrypts with the session key.
    public static func seal(_ json: Data, command: UInt32, version: Version, key: Data) throws -> Data {
        let header = Data(version.rawValue.utf8) + Data(count: 12)
        let withHeader = hasVersionHeader(command, version: version)
        switch version {
        case .v33:
            let c = try TuyaCipher(key: key).encrypt(json)
            return withHeader ? header + c : c
        case .v34:
            return try TuyaCipher(key: key).encrypt(withHeader ? header + json : json)
        }
    }

    /// The JSON inside a payload (the inverse of seal); a version header is dropped where present.
    public static func open(_ payload: Data, version: Version, key: Data) throws -> Data {
        var p = payload
        let tag = Data(version.rawValue.utf8)
        if version == .v33, p.starts(with: tag) { p = p.dropFirst(15) }
        guard !p.isEmpty else { return Data() }
        var plain = try TuyaCipher(key: key).decrypt(Data(p))
        if version == .v34, plain.starts(with: tag) { plain = plain.dropFirst(15) }
        return Data(plain)
    }

    // MARK: bytes

    static func append32(_ d: inout Data, _ v: UInt32) {
        withUnsafeBytes(of: v.bigEndian) { d.append(contentsOf: $0) }
    }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    /// Where the next frame prefix starts at or after `from` (or how much to drop, keeping a
    /// possible partial prefix at the end).
    static func findPrefix(_ buffer: Data, from: Int) -> Int {
        let b = [UInt8](buffer)
        var i = from
        while i + 4 <= b.count {
            if b[i] == 0, b[i + 1] == 0, b[i + 2] == 0x55, b[i + 3] == 0xAA { return i }
            i += 1
        }
        return max(from, b.count - 3)
    }

    /// CRC-32 (IEEE, as zlib's crc32).
    public static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
}

/// AES-128-ECB with PKCS#7 padding, what Tuya devices use for their payloads.
public struct TuyaCipher {
    public struct Failure: Error, CustomStringConvertible, Sendable { public let description: String }
    let key: SymmetricKey

    /// `key`: the device's 16-character local key (or a 3.4 session key).
    public init(key: Data) throws {
        guard key.count == 16 else { throw Failure(description: "a Tuya local key is 16 bytes (got \(key.count))") }
        self.key = SymmetricKey(data: key)
    }

    public func encrypt(_ plain: Data) throws -> Data {
        let pad = 16 - plain.count % 16
        var data = [UInt8](plain) + [UInt8](repeating: UInt8(pad), count: pad)
        try permute(&data, encrypt: true)
        return Data(data)
    }

    public func decrypt(_ cipher: Data) throws -> Data {
        guard !cipher.isEmpty, cipher.count % 16 == 0 else {
            throw Failure(description: "encrypted payload of \(cipher.count) bytes is not whole AES blocks")
        }
        var data = [UInt8](cipher)
        try permute(&data, encrypt: false)
        guard let pad = data.last, (1...16).contains(Int(pad)), data.suffix(Int(pad)).allSatisfy({ $0 == pad }) else {
            throw Failure(description: "payload does not decrypt (wrong local key?)")
        }
        return Data(data.dropLast(Int(pad)))
    }

    /// ECB without padding over whole blocks (the 3.4 session key is one).
    public func encryptBlocks(_ plain: Data) throws -> Data {
        var data = [UInt8](plain)
        try permute(&data, encrypt: true)
        return Data(data)
    }

    private func permute(_ data: inout [UInt8], encrypt: Bool) throws {
        for start in stride(from: 0, to: data.count, by: 16) {
            var block = Array(data[start..<(start + 16)])
            if encrypt { try AES.permute(&block, key: key) } else { try AES.inversePermute(&block, key: key) }
            data.replaceSubrange(start..<(start + 16), with: block)
        }
    }
}

/// The 3.4 session key exchange (commands 3, 4, 5), both sides.
public enum TuyaSession {
    /// Client: the payload of command 3 (the local nonce, encrypted with the local key).
    public static func start(localNonce: Data, localKey: Data) throws -> Data {
        try TuyaCipher(key: localKey).encrypt(localNonce)
    }

    /// Device: the payload of command 4: its nonce and proof it knows the key.
    public static func respond(remoteNonce: Data, localNonce: Data, localKey: Data) throws -> Data {
        let proof = Data(HMAC<SHA256>.authenticationCode(for: localNonce, using: SymmetricKey(data: localKey)))
        return try TuyaCipher(key: localKey).encrypt(remoteNonce + proof)
    }

    /// Client: checks command 4's answer and returns (remote nonce, payload of command 5).
    public static func finish(response: Data, localNonce: Data, localKey: Data) throws -> (
        remoteNonce: Data, finish: Data
    ) {
        let plain = try TuyaCipher(key: localKey).decrypt(response)
        guard plain.count >= 48 else {
            throw TuyaCipher.Failure(description: "session key answer too short (\(plain.count) bytes)")
        }
        let remote = plain.prefix(16)
        let proof = plain.dropFirst(16).prefix(32)
        let expected = Data(HMAC<SHA256>.authenticationCode(for: localNonce, using: SymmetricKey(data: localKey)))
        guard Data(proof) == expected else {
            throw TuyaCipher.Failure(
                description: "the device's session key answer does not authenticate (wrong local key?)")
        }
        let mine = Data(HMAC<SHA256>.authenticationCode(for: remote, using: SymmetricKey(data: localKey)))
        return (Data(remote), try TuyaCipher(key: localKey).encrypt(mine))
    }

    /// Both sides: the session key, AES-ECB(local key, local nonce XOR remote nonce).
    public static func key(localNonce: Data, remoteNonce: Data, localKey: Data) throws -> Data {
        let x = Data(zip(localNonce, remoteNonce).map { $0 ^ $1 })
        return try TuyaCipher(key: localKey).encryptBlocks(x.prefix(16))
    }
}
