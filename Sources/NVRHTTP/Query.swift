import Foundation
import Hummingbird
import NVRPlayback
import NVRTime

/// Query parameters, with 400s that say what was wrong.
struct Query {
    let request: Request

    func string(_ name: String) -> String? {
        guard let v = request.uri.queryParameters.get(name), !v.isEmpty else { return nil }
        return v
    }

    /// RFC 3339 or 90 kHz ticks, within Time90k.supported (checked before any arithmetic).
    func time(_ name: String) throws -> Int64? {
        guard let v = string(name) else { return nil }
        switch Time90k.parseChecked(v) {
        case .success(let t): return t
        case .failure(let why): throw APIError.badTime("\(name)='\(v.prefix(64))' \(why)")
        }
    }

    func requiredTime(_ name: String) throws -> Int64 {
        guard let t = try time(name) else {
            throw APIError.badRequest("\(name) is required (RFC 3339 or 90 kHz ticks)")
        }
        return t
    }

    /// `start` and `end`, both required, end after start.
    func range() throws -> Range<Int64> {
        let s = try requiredTime("start")
        let e = try requiredTime("end")
        guard e > s else { throw APIError.badRequest("end must be after start") }
        return s..<e
    }

    func int(_ name: String, in bounds: ClosedRange<Int>) throws -> Int? {
        guard let v = string(name) else { return nil }
        guard let n = Int(v), bounds.contains(n) else {
            throw APIError.badRequest("\(name)='\(v)' must be an integer in \(bounds.lowerBound)…\(bounds.upperBound)")
        }
        return n
    }

    /// A true/false parameter; absent is false, anything else a 400 that says so.
    func flag(_ name: String) throws -> Bool {
        switch string(name) {
        case nil, "false": return false
        case "true": return true
        case let v?: throw APIError.badRequest("\(name)='\(v.prefix(16))' must be true or false")
        }
    }

    func days() throws -> LocalDays {
        do { return try LocalDays(tz: string("tz")) } catch { throw APIError.badRequest("\(error)") }
    }
}
