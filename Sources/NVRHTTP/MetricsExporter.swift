import Foundation
import NVRCluster
import NVRDetect
import NVRIndex
import NVRIndexPostgres
import NVRMQTT
import NVRRecorder
import NVRStorage
import NVRTime
import Prometheus
import Synchronization

/// `GET /metrics`: the NVR's state in Prometheus's text format (design/metrics.md).
///
/// The recorder keeps plain atomic totals (CameraCounters, Retention's deletions) so the
/// recording path never touches a metrics library; a scrape copies them into the registry,
/// together with what is read at that moment (states, storage, viewers). HTTP requests are
/// counted as they finish.
final class MetricsExporter: Sendable {
    private let registry = PrometheusCollectorRegistry()
    /// One scrape at a time: counters are brought up to date by reset + increment.
    private let scraping = Mutex<Set<String>>([])
    private let requests = Mutex<[RequestKey: Counter]>([:])

    private struct RequestKey: Hashable { let route: String, method: String, status: Int }

    /// The states a camera can be in, each its own series (one of them 1).
    private static let states = ["stopped", "connecting", "streaming", "stalled", "lost", "failed"]

    init() {
        registry.makeGauge(
            name: "nvr_build_info", labels: [("version", NVRVersion.current)],
            help: "This build's version (always 1)."
        ).set(Int64(1))
    }

    /// One finished request. `route` is the route's template (`/api/cameras/{name}`), never the
    /// path itself, so the number of series stays bounded whatever clients ask for.
    func requestFinished(route: String, method: String, status: Int) {
        let key = RequestKey(route: route, method: method, status: status)
        let counter = requests.withLock { known in
            if let c = known[key] { return c }
            let c = registry.makeCounter(
                name: "nvr_http_requests_total",
                labels: [("route", route), ("method", method), ("status", String(status))],
                help: "HTTP requests answered, by route template, method and status.")
            known[key] = c
            return c
        }
        counter.increment()
    }

    /// The exposition text for one scrape.
    func render(index: any IndexStore, recorder: Recorder?, connections: ConnectionRegistry? = nil) throws -> String {
        let cameras = try index.cameras()
        let now = Time90k.now()
        return try scraping.withLock { seen in
            var names = Set<String>()
            var used: Int64 = 0
            for cam in cameras {
                guard let id = cam.id else { continue }
                names.insert(cam.name)
                let stored = try index.storageSummary(cameraID: id)
                used += stored.bytes
                let labels = [("camera", cam.name)]
                gauge("nvr_camera_stored_bytes", labels).set(stored.bytes)
                gauge("nvr_camera_enabled", labels).set(Int64(cam.enabled ? 1 : 0))
                let session = recorder?.session(named: cam.name)
                let status = session?.status
                let state = status?.state.rawValue ?? "stopped"
                gauge("nvr_camera_up", labels).set(Int64(state == "streaming" ? 1 : 0))
                for s in Self.states {
                    gauge("nvr_camera_state", labels + [("state", s)])
                        .set(Int64(s == state ? 1 : 0))
                }
                let newest = status?.lastFrame90k ?? stored.newest90k
                if let newest {
                    gauge("nvr_camera_last_frame_age_seconds", labels)
                        .set(Double(max(0, now - newest)) / 90_000)
                }
                guard let recorder else { continue }
                let c = recorder.counters(for: cam.name)
                counter("nvr_camera_frames_total", labels, c.frames.load(ordering: .relaxed))
                counter("nvr_camera_received_bytes_total", labels, c.bytes.load(ordering: .relaxed))
                counter(
                    "nvr_camera_dropped_frames_total", labels,
                    c.droppedFrames.load(ordering: .relaxed))
                counter(
                    "nvr_camera_connections_total", labels,
                    c.connections.load(ordering: .relaxed))
                counter("nvr_camera_segments_total", labels, c.segments.load(ordering: .relaxed))
                counter(
                    "nvr_camera_card_backfill_bytes_total", labels,
                    c.cardBackfillBytes.load(ordering: .relaxed))
                // 0 while the camera has no session (disabled, being restarted), not the last count.
                for stream in ["main", "sub"] {
                    let hub = stream == "main" ? session?.live : session?.liveSubstream
                    gauge("nvr_live_viewers", labels + [("stream", stream)]).set(
                        Int64(hub?.viewers.load(ordering: .relaxed) ?? 0))
                }
            }
            // A removed camera's series go with it.
            for gone in seen.subtracting(names) { forget(camera: gone) }
            seen = names
            gauge("nvr_storage_used_bytes", []).set(used)
            if let fs = recorder?.retention.fileSystem() {
                gauge("nvr_storage_size_bytes", []).set(fs.size)
                gauge("nvr_storage_free_bytes", []).set(fs.free)
            }
            if let retention = recorder?.retention {
                counter("nvr_retention_deleted_segments_total", [], retention.deletedSegments.load(ordering: .relaxed))
                counter("nvr_retention_deleted_bytes_total", [], retention.deletedBytes.load(ordering: .relaxed))
            }
            if let writer = recorder?.writer {
                let backlog = writer.backlog
                gauge("nvr_index_writer_pending_writes", []).set(Int64(backlog.writes))
                gauge("nvr_index_writer_oldest_pending_seconds", []).set(backlog.oldestSeconds)
                gauge("nvr_index_journal_writes", []).set(Int64(writer.journaledWrites))
                counter("nvr_index_writer_commits_total", [], Int64(writer.commits.load(ordering: .relaxed)))
                counter(
                    "nvr_index_writer_dropped_writes_total", [], Int64(writer.droppedWrites.load(ordering: .relaxed)))
            }
            if let connections {
                gauge("nvr_http_connections", []).set(Int64(connections.open.load(ordering: .relaxed)))
                gauge("nvr_http_max_connections_per_address", []).set(
                    Int64(connections.limits.maxConnectionsPerAddress))
                counter(
                    "nvr_http_idle_closed_connections_total", [], Int64(connections.idleCloses.load(ordering: .relaxed))
                )
                for (status, n) in connections.refused.withLock({ $0 }) {
                    counter("nvr_http_refused_connections_total", [("status", String(status))], Int64(n))
                }
            }
            // Recorder nodes sharing a PostgreSQL index (design/scale-out.md).
            if let pg = index as? PostgresIndex, let nodes = try? NodeSummary.list(pg, me: pg.node) {
                for n in nodes {
                    let labels = [("node", n.name)]
                    gauge("nvr_node_up", labels).set(Int64(n.live ? 1 : 0))
                    gauge("nvr_node_cameras", labels).set(Int64(n.cameras.count))
                    gauge("nvr_node_heartbeat_age_seconds", labels).set(n.heartbeatSecondsAgo)
                }
            }
            // The MQTT bridge, as it saved its state in the index (only while a server runs here).
            if recorder != nil, let mqtt = MQTTSavedStatus.load(from: index) {
                gauge("nvr_mqtt_connected", []).set(Int64(mqtt.state == "connected" ? 1 : 0))
                gauge("nvr_mqtt_queued_events", []).set(Int64(mqtt.queued))
                counter("nvr_mqtt_published_messages_total", [], Int64(mqtt.published))
                counter("nvr_mqtt_dropped_events_total", [], Int64(mqtt.dropped))
            }
            // The object detector, once a camera has started it.
            var histogram = ""
            if let stats = recorder?.runningDetector?.stats.snapshot {
                for (camera, n) in stats.inferences {
                    counter("nvr_detect_inferences_total", [("camera", camera)], Int64(n))
                }
                for (camera, n) in stats.skipped {
                    counter("nvr_detect_skipped_frames_total", [("camera", camera)], Int64(n))
                }
                for (camera, labels) in stats.detections {
                    for (label, n) in labels {
                        counter("nvr_detect_detections_total", [("camera", camera), ("label", label)], Int64(n))
                    }
                }
                counter("nvr_detect_failures_total", [], Int64(stats.failures))
                histogram = Self.histogram(
                    "nvr_detect_inference_seconds",
                    help: "Time the detector took per picture (the model and decoding its outputs).", stats)
            }
            return registry.emitToString() + histogram
        }
    }

    /// Each metric's HELP line (the registry insists a name always has the same one).
    private static let help: [String: String] = [
        "nvr_camera_stored_bytes": "Bytes of recordings kept for the camera.",
        "nvr_node_up": "1 while the recorder node is heard from (PostgreSQL index with nodes).",
        "nvr_node_cameras": "Cameras the node holds a lease on (records).",
        "nvr_node_heartbeat_age_seconds": "Seconds since the node's last heartbeat, on PostgreSQL's clock.",
        "nvr_camera_enabled": "1 when the camera is enabled.",
        "nvr_camera_up": "1 while the camera streams.",
        "nvr_camera_state": "The camera's state: one series per state, 1 for the current one.",
        "nvr_camera_last_frame_age_seconds": "Seconds since the newest recorded frame.",
        "nvr_live_viewers": "Live view connections.",
        "nvr_storage_used_bytes": "Bytes of recordings in the index.",
        "nvr_storage_size_bytes": "Size of the file system holding the storage root.",
        "nvr_storage_free_bytes": "Free bytes (for the NVR's user) on that file system.",
        "nvr_camera_frames_total": "Video frames received from the camera.",
        "nvr_camera_received_bytes_total": "Bytes received from the camera (every stream).",
        "nvr_camera_dropped_frames_total": "Frames received while recording that could not be recorded.",
        "nvr_camera_connections_total": "Times the camera started streaming (reconnections included).",
        "nvr_camera_segments_total": "Segments completed.",
        "nvr_camera_card_backfill_bytes_total": "Bytes read from the camera's card to fill recording gaps.",
        "nvr_retention_deleted_segments_total": "Segments deleted by retention since the NVR started.",
        "nvr_retention_deleted_bytes_total": "Bytes deleted by retention since the NVR started.",
        "nvr_index_writer_pending_writes":
            "Recording writes (segment rows, events, marks) handed to the index writer and not yet committed.",
        "nvr_index_writer_oldest_pending_seconds":
            "How long the oldest uncommitted recording write has waited (0 when none; normally under 0.25).",
        "nvr_index_writer_commits_total": "Transactions the index writer committed since the NVR started.",
        "nvr_index_journal_writes":
            "Recording writes kept in the storage root's journal because the index (PostgreSQL) cannot take them yet.",
        "nvr_http_connections": "Open HTTP connections (WebSockets included).",
        "nvr_http_max_connections_per_address":
            "Open connections one client address may have; one more is answered 503 and closed.",
        "nvr_http_idle_closed_connections_total":
            "Kept-alive connections closed after the idle timeout with no request.",
        "nvr_http_refused_connections_total":
            "Connections answered with an error and closed before routing, by status: 400, 414, 431, 501 malformed requests, 408 headers too slow, 503 over the per-address cap.",
        "nvr_mqtt_connected": "1 while the NVR is connected to its MQTT broker ([mqtt]).",
        "nvr_mqtt_queued_events": "Event messages waiting for the MQTT broker to come back.",
        "nvr_mqtt_published_messages_total": "Messages published to the MQTT broker since the NVR started.",
        "nvr_mqtt_dropped_events_total":
            "Event messages dropped while the MQTT broker was away (the oldest first, once 1000 waited).",
        "nvr_detect_inferences_total": "Pictures of the camera the object detector looked at.",
        "nvr_detect_skipped_frames_total":
            "Pictures of the camera not looked at because the detector was still busy with its previous one.",
        "nvr_detect_detections_total": "Objects the detector found in the camera's pictures, by label.",
        "nvr_detect_failures_total": "Pictures the detector could not look at (the model failed on them).",
        "nvr_index_writer_dropped_writes_total":
            "Recording writes the index refused or could not take for 2 minutes (their segments are mended by recovery).",
    ]

    /// A histogram kept as plain counts by the detector, in the exposition format.
    static func histogram(_ name: String, help: String, _ s: DetectorStats.Snapshot) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (le, n) in zip(DetectorStats.buckets, s.bucketCounts) { out += "\(name)_bucket{le=\"\(le)\"} \(n)\n" }
        out += "\(name)_bucket{le=\"+Inf\"} \(s.count)\n\(name)_sum \(s.sum)\n\(name)_count \(s.count)\n"
        return out
    }

    private func gauge(_ name: String, _ labels: [(String, String)]) -> Gauge {
        let help = Self.help[name] ?? ""
        return labels.isEmpty
            ? registry.makeGauge(name: name, help: help) : registry.makeGauge(name: name, labels: labels, help: help)
    }

    private func counterMetric(_ name: String, _ labels: [(String, String)]) -> Counter {
        let help = Self.help[name] ?? ""
        return labels.isEmpty
            ? registry.makeCounter(name: name, help: help)
            : registry.makeCounter(name: name, labels: labels, help: help)
    }

    /// Sets a counter to a running total kept elsewhere.
    private func counter(_ name: String, _ labels: [(String, String)], _ total: Int64) {
        let c = counterMetric(name, labels)
        c.reset()
        c.increment(by: max(0, total))
    }

    private static let perCameraGauges = [
        "nvr_camera_stored_bytes", "nvr_camera_enabled", "nvr_camera_up", "nvr_camera_last_frame_age_seconds",
    ]
    private static let perCameraCounters = [
        "nvr_camera_frames_total", "nvr_camera_received_bytes_total", "nvr_camera_dropped_frames_total",
        "nvr_camera_connections_total", "nvr_camera_segments_total", "nvr_camera_card_backfill_bytes_total",
    ]

    private func forget(camera: String) {
        let labels = [("camera", camera)]
        for name in Self.perCameraGauges { registry.unregisterGauge(gauge(name, labels)) }
        for name in Self.perCameraCounters { registry.unregisterCounter(counterMetric(name, labels)) }
        for s in Self.states { registry.unregisterGauge(gauge("nvr_camera_state", labels + [("state", s)])) }
        for s in ["main", "sub"] { registry.unregisterGauge(gauge("nvr_live_viewers", labels + [("stream", s)])) }
    }
}
