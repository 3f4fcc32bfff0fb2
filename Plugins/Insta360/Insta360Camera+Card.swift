import CNVRPlugin
import Foundation
import Insta360API
import PluginSupport

extension Insta360Camera {
    // MARK: card

    /// The card's videos, every page of camera.listFiles, with durations read from each file's
    /// MP4 header (cached) and spans ending at dateTimeZone (see nvr_plugin.h, card_list).
    func cardList() throws -> String {
        ensureWatcher()
        var entries: [OSCFileEntry] = []
        var position = 0
        for _ in 0..<10_000 {
            let r = try osc.execute(
                "camera.listFiles",
                [
                    "fileType": "video", "startPosition": position, "entryCount": config.listPageSize,
                    "maxThumbSize": NSNull(),
                ], wait: config.httpTimeout * 4)
            let page = try OSCFilePage(results: r)
            entries += page.entries
            position += page.entries.count
            // A card holds thousands of files, not millions: past that the answers are wrong.
            if page.entries.isEmpty || position >= page.totalEntries || entries.count >= Self.maxListedFiles { break }
        }
        var media: [[String: Any]] = []
        var unreadable: [String] = []
        for e in entries {
            guard let name = Insta360FileName(e.name), name.isVideo else { continue }
            let duration: Double
            do { duration = try self.duration(of: e) } catch {
                unreadable.append("\(e.name): \(error)")
                continue
            }
            guard let span = Insta360CardVideo.span(dateTimeZone: e.dateTimeZone, duration: duration) else {
                unreadable.append("\(e.name): unreadable dateTimeZone '\(e.dateTimeZone)'")
                continue
            }
            media.append([
                "id": e.path, "name": e.name, "start_utc": span.start, "duration": duration, "size": e.size,
                "timeline": name.onTimeline,
            ])
        }
        if !unreadable.isEmpty {
            report {
                $0.log(
                    NVR_LOG_INFO,
                    "card files left out (a file still being written has no index yet): \(unreadable.prefix(5).joined(separator: "; "))"
                )
            }
        }
        var out: [String: Any] = ["media": media]
        // The camera's clock, read last. Insta360's `_dateTime` has no zone; OSC's standard
        // `dateTimeZone` has one, and so do the card's file stamps (a camera without the
        // standard option still says its zone there). Whole seconds: watching for the tick
        // pins the clock down (see preciseCameraClock).
        let zone = entries.lazy.compactMap { OSC.zoneSeconds(of: $0.dateTimeZone) }.first
        do {
            _ = try readClockUTC(zoneFallback: zone)
            out["clock_utc"] = try preciseCameraClock(read: { try readClockUTC(zoneFallback: zone) })
        } catch {
            report {
                $0.log(
                    NVR_LOG_WARNING,
                    "the camera's clock is unknown (\(error)): card times are taken as they are, uncorrected")
            }
        }
        return jsonText(out)
    }

    /// The camera's clock in UTC seconds (see OSCOptions.clockUTC). A model that refuses the
    /// standard option is asked the vendor one alone from then on.
    func readClockUTC(zoneFallback: Int?) throws -> Double {
        lock.lock()
        let names = clockOptionNames
        lock.unlock()
        let o: OSCOptions
        do {
            o = OSCOptions(
                results: try osc.execute("camera.getOptions", ["optionNames": names], wait: config.httpTimeout * 2))
        } catch let e as OSCError where e.code == "invalidParameterName" && names.count > 1 {
            lock.lock()
            clockOptionNames = ["_dateTime"]
            lock.unlock()
            return try readClockUTC(zoneFallback: zoneFallback)
        }
        guard let t = o.clockUTC(zoneFallback: zoneFallback) else {
            throw OSCError(
                code: "noClock",
                message:
                    "the camera gave neither dateTimeZone nor a _dateTime whose zone is known (\(o.dateTime ?? "none"))"
            )
        }
        return t
    }

    /// A card video's length from its MP4 header: a few Range reads, cached per file.
    func duration(of e: OSCFileEntry) throws -> Double {
        let key = "\(e.path) \(e.size)"
        lock.lock()
        let cached = durations[key]
        lock.unlock()
        if let cached { return cached }
        let d = try MP4Header.duration(size: e.size) { offset, length in
            var bytes: [UInt8] = []
            _ = try osc.readFile(path: e.path, offset: offset, length: Int64(length)) { chunk in
                // Never more than was asked, whatever the server sends.
                bytes.append(contentsOf: chunk.prefix(max(length - bytes.count, 0)))
                return bytes.count < length
            }
            return bytes
        }
        lock.lock()
        durations[key] = d
        lock.unlock()
        return d
    }

    /// Most files one listing takes.
    static let maxListedFiles = 20_000

    /// Streams a byte range of a card file (id: its path, as listed). Returns false when the
    /// sink cancelled.
    func cardRead(id: String, offset: Int64, length: Int64, sink: (UnsafeRawBufferPointer) -> Bool) throws -> Bool {
        guard !id.contains(".."), !id.hasPrefix("/"), id.hasPrefix("DCIM/") else {
            throw OSCError(code: "invalidParameterValue", message: "'\(id)' is not a card file (DCIM/…)")
        }
        do { return try osc.readFile(path: id, offset: offset, length: length, sink: sink) } catch {
            // The host says which file; this says why.
            throw OSCError(
                code: "readFailed",
                message: "\(error)".hasSuffix("HTTP 404") ? "no such file on the card (HTTP 404)" : "\(error)")
        }
    }
}
