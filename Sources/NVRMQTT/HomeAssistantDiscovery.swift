import Foundation

/// Home Assistant's MQTT discovery (its "MQTT Discovery" documentation): a retained config
/// message per entity at `<discovery prefix>/<component>/<node id>/<object id>/config`, which
/// makes the entity appear with no YAML; an empty retained message removes it.
struct HomeAssistantDiscovery {
    /// The NVR's MQTT topics start with it (mqtt.topic_prefix).
    let prefix: String
    /// Home Assistant's discovery prefix (its default).
    let discoveryPrefix = "homeassistant"
    /// This NVR among others on the broker (mqtt.client_id, made safe for an id).
    let node: String
    let version: String
    /// Whether command topics are listened to (mqtt.commands): switches only then.
    let commands: Bool

    init(prefix: String, clientID: String, version: String, commands: Bool) {
        self.prefix = prefix
        node = Self.safeID(clientID)
        self.version = version
        self.commands = commands
    }

    /// One entity's config: its topic and payload.
    struct Entity: Equatable {
        var topic: String
        var payload: String
    }

    /// Letters, digits, `_` and `-`: what Home Assistant accepts in node and object ids.
    static func safeID(_ s: String) -> String {
        String(s.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" })
    }

    /// The NVR itself: a connectivity sensor on the availability topic, the device the
    /// cameras' devices are connected through.
    func server() -> Entity {
        entity(
            "binary_sensor", "status",
            [
                "name": "Status", "unique_id": "\(node)_status", "state_topic": "\(prefix)/available",
                "payload_on": "online", "payload_off": "offline", "device_class": "connectivity",
                "entity_category": "diagnostic",
                "device": [
                    "identifiers": [node], "name": "NVR \(node)", "manufacturer": "nvr",
                    "model": "Network video recorder",
                    "sw_version": version,
                ],
            ])
    }

    /// A camera's entities: its picture (the newest event's snapshot, any label), motion, its state, and
    /// with commands on, switches for recording and motion detection; `labels` adds a binary
    /// sensor and a count per label its events have had (a doorbell, a person).
    func camera(_ name: String, plugin: String, model: String?, labels: [String]) -> [Entity] {
        let id = Self.safeID(name)
        let device: [String: Any] = [
            "identifiers": ["\(node)_\(id)"], "name": name, "manufacturer": plugin, "model": model ?? plugin,
            "sw_version": version, "via_device": node,
        ]
        func common(_ object: String, _ entityName: String) -> [String: Any] {
            [
                "name": entityName, "unique_id": "\(node)_\(id)_\(object)", "availability_topic": "\(prefix)/available",
                "device": device,
            ]
        }
        let base = "\(prefix)/\(name)"
        var out = [
            entity(
                "camera", "\(id)_camera",
                common("camera", "Last event").merging(["topic": "\(base)/snapshot"]) { a, _ in a }),
            entity(
                "binary_sensor", "\(id)_motion",
                common("motion", "Motion").merging([
                    "state_topic": "\(base)/motion", "payload_on": "ON", "payload_off": "OFF", "device_class": "motion",
                ]) { a, _ in a }),
            entity(
                "sensor", "\(id)_state",
                common("state", "State").merging([
                    "state_topic": "\(base)/state", "value_template": "{{ value_json.state }}",
                    "json_attributes_topic": "\(base)/state", "entity_category": "diagnostic",
                ]) { a, _ in a }),
        ]
        if commands {
            for (object, title) in [("recording", "Recording"), ("motion_detection", "Motion detection")] {
                // <camera>/recording/set and <camera>/motion/set (Frigate says recordings/set).
                let topic = object == "recording" ? "\(base)/recording" : "\(base)/motion"
                out.append(
                    entity(
                        "switch", "\(id)_\(object)",
                        common(object, title).merging([
                            "command_topic": "\(topic)/set", "state_topic": "\(topic)/state", "payload_on": "ON",
                            "payload_off": "OFF", "entity_category": "config",
                        ]) { a, _ in a }))
            }
        } else {
            out.append(
                entity(
                    "binary_sensor", "\(id)_recording",
                    common("recording", "Recording").merging([
                        "state_topic": "\(base)/recording/state", "payload_on": "ON", "payload_off": "OFF",
                        "entity_category": "diagnostic",
                    ]) { a, _ in a }))
        }
        for label in labels where label != "motion" {
            let l = Self.safeID(label)
            out.append(
                entity(
                    "binary_sensor", "\(id)_\(l)",
                    common(l, label.capitalized).merging([
                        "state_topic": "\(base)/\(label)", "value_template": "{{ 'ON' if value | int > 0 else 'OFF' }}",
                        "device_class": "occupancy",
                    ]) { a, _ in a }))
            out.append(
                entity(
                    "sensor", "\(id)_\(l)_count",
                    common("\(l)_count", "\(label.capitalized) count").merging([
                        "state_topic": "\(base)/\(label)", "state_class": "measurement",
                    ]) { a, _ in a }))
        }
        return out
    }

    /// The config topics of a camera's entities, to remove them (an empty retained message each).
    func topics(camera name: String, labels: [String]) -> [String] {
        camera(name, plugin: "", model: nil, labels: labels).map(\.topic) + staleTopics(camera: name)
    }

    /// The entities of the other mqtt.commands setting (switches with commands, a binary
    /// sensor without), cleared when a camera is announced so a change leaves no stale one.
    func staleTopics(camera name: String) -> [String] {
        let id = Self.safeID(name)
        return commands
            ? ["\(discoveryPrefix)/binary_sensor/\(node)/\(id)_recording/config"]
            : [
                "\(discoveryPrefix)/switch/\(node)/\(id)_recording/config",
                "\(discoveryPrefix)/switch/\(node)/\(id)_motion_detection/config",
            ]
    }

    private func entity(_ component: String, _ object: String, _ config: [String: Any]) -> Entity {
        let data =
            (try? JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data()
        return Entity(
            topic: "\(discoveryPrefix)/\(component)/\(node)/\(object)/config",
            payload: String(decoding: data, as: UTF8.self))
    }
}
