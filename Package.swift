// swift-tools-version: 6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]
/// The modules every packet goes through (the RTSP client, the depacketizers, the gate and
/// segmenter): in release builds, without the runtime's exclusivity checks, which with their
/// thread-local lookups were 12 % of the recording path's instructions per frame
/// (bench/record-callgrind, bench/README.md, issue 35). Debug builds keep them: every test
/// runs on one, but DebianPackageTests, which builds and installs the release package.
let packetPathSettings: [SwiftSetting] =
    swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "nvr",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "nvr", targets: ["nvr"]),
        .library(name: "nvr-plugin-rtsp", type: .dynamic, targets: ["RTSPPlugin"]),
        .library(name: "nvr-plugin-demo", type: .dynamic, targets: ["DemoPlugin"]),
        .library(name: "nvr-plugin-gopro", type: .dynamic, targets: ["GoProPlugin"]),
        .library(name: "nvr-plugin-insta360", type: .dynamic, targets: ["Insta360Plugin"]),
        .library(name: "nvr-plugin-tuya", type: .dynamic, targets: ["TuyaPlugin"]),
        .library(name: "nvr-plugin-onvif", type: .dynamic, targets: ["ONVIFPlugin"]),
        .executable(name: "camsim", targets: ["camsim"]),
        .executable(name: "index-writer-bench", targets: ["IndexWriterBench"]),
        .executable(name: "index-bench", targets: ["IndexBench"]),
        .executable(name: "record-replay-bench", targets: ["RecordReplayBench"]),
        // For Fuzz/Package.swift (libFuzzer builds), not installed.
        .library(name: "NVRFuzzTargets", targets: ["NVRFuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Already in the graph through Hummingbird and swift-certificates; named because NVRHTTP
        // and the camera simulators import them.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // The index's second backend, for several recorder nodes sharing one catalogue (issue 33).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // C libraries and the plugin ABI: the only code host and plugins share.
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [
                .apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])
            ]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .target(name: "CNVRPlugin"),
        // ONNX Runtime's C API, declared (the runtime comes from a PyPI wheel, without headers,
        // and is loaded with dlopen).
        .target(name: "CONNXRuntime"),

        // Leaves.
        // Time on the index's scale and overflow-checked timestamp arithmetic.
        .target(name: "NVRTime", swiftSettings: swiftSettings),
        // A thread that can be told to stop (and is joined): the host's and the plugins' loops.
        .target(name: "NVRWorker", swiftSettings: swiftSettings),
        .target(
            name: "NVRMedia",
            dependencies: ["NVRTime", "CFFmpeg", "CTurboJPEG", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: packetPathSettings),
        .target(
            name: "NVRIndex", dependencies: ["NVRTime", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings),
        // The index on PostgreSQL: the same IndexStore, for nodes sharing one catalogue.
        .target(
            name: "NVRIndexPostgres",
            dependencies: [
                "NVRIndex", "NVRTime", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings),

        // Object detection: ONNX Runtime (dlopen), the model layouts, the server's detector
        // thread, the tracker that turns detections into objects.
        .target(name: "NVRDetect", dependencies: ["CONNXRuntime", "NVRWorker"], swiftSettings: swiftSettings),

        // The read side: where recordings live, timelines by local day, any range as one MP4,
        // snapshots. Needs the index and the files, never the recorder.
        .target(name: "NVRPlayback", dependencies: ["NVRTime", "NVRMedia", "NVRIndex"], swiftSettings: swiftSettings),

        // The storage root and what keeps it right, for the recorder, the API and the CLI: the
        // index writer (the one thread that writes recordings' rows), recovery, retention and
        // deletion, the integrity check, the serve lock; and the plain words errors are said in.
        .target(
            name: "NVRStorage",
            dependencies: [
                "NVRTime", "NVRMedia", "NVRIndex", "NVRPlayback", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // Loading plugins (dlopen), one camera's plugin instance, the C ABI's structs and callbacks.
        .target(
            name: "NVRPluginHost", dependencies: ["NVRTime", "NVRMedia", "CNVRPlugin"], swiftSettings: swiftSettings),
        // The recorder: each camera's session, the recording gate, the segmenter, events and
        // motion, live fan-out, card backfill, the upkeep thread; on NVRStorage's index writer.
        .target(
            name: "NVRRecorder",
            dependencies: [
                "NVRTime", "NVRMedia", "NVRIndex", "NVRPlayback", "NVRStorage", "NVRPluginHost", "NVRWorker",
                "NVRDetect", "CNVRPlugin",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: packetPathSettings),
        // Several recorder nodes on one PostgreSQL index: camera leases, failover.
        .target(
            name: "NVRCluster",
            dependencies: [
                "NVRIndex", "NVRIndexPostgres", "NVRPlayback", "NVRRecorder", "NVRWorker",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
            ], swiftSettings: swiftSettings),
        // Cameras as the user manages them: admin (add, change, rename, remove), discovery on
        // the LAN, the probe, the overview the API and CLI list.
        .target(
            name: "NVRCameras",
            dependencies: [
                "NVRTime", "NVRMedia", "NVRIndex", "NVRPlayback", "NVRStorage", "NVRPluginHost", "NVRRecorder",
                "NVRAccess", "CNVRPlugin",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings),
        // MQTT (libmosquitto): events, camera states and Home Assistant discovery for the smart
        // home, and its commands; on a thread of its own beside the recorder.
        .target(
            name: "NVRMQTT",
            dependencies: [
                "CMosquitto", "NVRIndex", "NVRTime", "NVRWorker", "NVRRecorder", "NVRPlayback", "NVRStorage",
                "NVRPluginHost",
                "NVRAccess", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // Users, sessions, API tokens, login throttling, the audit log.
        .target(
            name: "NVRAccess",
            dependencies: [
                "NVRIndex", "NVRTime", .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "NVRHTTP",
            dependencies: [
                "NVRCameras", "NVRRecorder", "NVRPluginHost", "NVRStorage", "NVRPlayback", "NVRMedia", "NVRIndex",
                "NVRIndexPostgres", "NVRCluster",
                "NVRTime", "NVRAccess", "NVRMQTT", "NVRDetect", "NVRWorker",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "NVRCommands",
            dependencies: [
                "NVRCameras", "NVRRecorder", "NVRPluginHost", "NVRStorage", "NVRPlayback", "NVRMedia", "NVRIndex",
                "NVRIndexPostgres", "NVRCluster",
                "NVRTime",
                "NVRHTTP", "NVRAccess", "NVRMQTT", "NVRDetect", "TOMLKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(name: "nvr", dependencies: ["NVRCommands"], swiftSettings: swiftSettings),

        // Camera plugins: dynamic libraries that share only the C ABI with the host.
        .target(
            name: "RTSPPlugin", dependencies: ["CNVRPlugin", "PluginSupport"], path: "Plugins/RTSP",
            swiftSettings: swiftSettings),
        .target(
            name: "DemoPlugin", dependencies: ["CNVRPlugin", "CFFmpeg", "PluginSupport"], path: "Plugins/Demo",
            swiftSettings: swiftSettings),
        .target(
            name: "GoProPlugin", dependencies: ["CNVRPlugin", "PluginSupport", "GoProAPI"], path: "Plugins/GoPro",
            swiftSettings: swiftSettings),
        .target(
            name: "PluginSupport", dependencies: ["CNVRPlugin"], path: "Plugins/Support", swiftSettings: swiftSettings),
        // The GoPro API's answers, decoded: shared by the plugin and the tests that check it against GoPro's OpenAPI.
        .target(name: "GoProAPI", path: "Plugins/GoProAPI", swiftSettings: swiftSettings),
        .target(
            name: "Insta360Plugin", dependencies: ["CNVRPlugin", "PluginSupport", "Insta360API"],
            path: "Plugins/Insta360", exclude: ["README.md"], swiftSettings: swiftSettings),
        // OSC answers, Insta360 file names and MP4 header reading: shared by the plugin and its tests.
        .target(name: "Insta360API", path: "Plugins/Insta360API", swiftSettings: swiftSettings),
        .target(
            name: "TuyaPlugin", dependencies: ["CNVRPlugin", "PluginSupport", "TuyaAPI"], path: "Plugins/Tuya",
            exclude: ["README.md"], swiftSettings: swiftSettings),
        // Tuya: cloud request signing, LAN framing and encryption; shared by the plugin and its tests.
        .target(
            name: "TuyaAPI",
            dependencies: [
                "PluginSupport", "NVRWorker", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Plugins/TuyaAPI", swiftSettings: swiftSettings),

        .target(
            name: "ONVIFPlugin", dependencies: ["CNVRPlugin", "PluginSupport", "ONVIFAPI", "NVRWorker"],
            path: "Plugins/ONVIF", exclude: ["README.md"],
            swiftSettings: swiftSettings),
        // SOAP, WS-Security and the ONVIF calls (device, media, PullPoint events): shared by the plugin and its tests.
        .target(
            name: "ONVIFAPI", dependencies: ["PluginSupport", .product(name: "Crypto", package: "swift-crypto")],
            path: "Plugins/ONVIFAPI",
            swiftSettings: swiftSettings),

        // Camera simulators for tests, also runnable by hand: swift run camsim gopro
        .target(
            name: "CamSim",
            dependencies: [
                "TuyaAPI", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/CamSim", swiftSettings: swiftSettings),
        .executableTarget(
            name: "camsim", dependencies: ["CamSim", "TuyaAPI", .product(name: "Logging", package: "swift-log")],
            path: "Tests/CamSimMain",
            swiftSettings: swiftSettings),

        // bench/index-writer: packet delays of recording cameras while retention deletes (bench/README.md).
        .executableTarget(
            name: "IndexWriterBench",
            dependencies: [
                "NVRRecorder", "NVRStorage", "NVRPlayback", "NVRIndex", "NVRMedia", "NVRTime",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/index-writer-bench", swiftSettings: swiftSettings),
        // bench/index: recording writes into a year-full index, SQLite and PostgreSQL (bench/README.md).
        .executableTarget(
            name: "IndexBench", dependencies: ["NVRIndex", "NVRIndexPostgres"], path: "bench/index-bench",
            swiftSettings: swiftSettings),
        // bench/record-callgrind: the recording path's instructions per packet (bench/README.md).
        .executableTarget(
            name: "RecordReplayBench",
            dependencies: [
                "NVRRecorder", "NVRStorage", "NVRIndex", "NVRMedia", "NVRPlayback", "NVRTime",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/record-replay", swiftSettings: swiftSettings),

        // Fuzzing entry points (libFuzzer build: Fuzz/Package.swift; replayed by NVRFuzzTests).
        .target(
            name: "NVRFuzzTargets",
            dependencies: [
                "NVRTime", "NVRMedia", "NVRIndex", "NVRPlayback", "NVRRecorder", "NVRPluginHost", "NVRHTTP", "GoProAPI",
                "Insta360API",
                "TuyaAPI", "PluginSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Fuzz/Targets", swiftSettings: swiftSettings),
        .target(
            name: "TestSupport",
            dependencies: [
                "NVRCameras", "NVRRecorder", "NVRPluginHost", "NVRStorage", "NVRCommands", "NVRTime", "NVRPlayback",
                "NVRIndex", "NVRMedia", .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/Support",
            exclude: [
                "rtsp_camera.py", "hostile_rtsp_camera.py", "onvif_camera.py", "onvif_client_check.py",
                "mdns_service.py", "make_test_models.py",
            ], swiftSettings: swiftSettings),
        .testTarget(name: "NVRTimeTests", dependencies: ["NVRTime"], swiftSettings: swiftSettings),
        .testTarget(name: "NVRFuzzTests", dependencies: ["NVRFuzzTargets"], swiftSettings: swiftSettings),
        .testTarget(name: "NVRMediaTests", dependencies: ["NVRMedia", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "NVRIndexTests",
            dependencies: [
                "NVRIndex", "NVRIndexPostgres", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(name: "NVRPlaybackTests", dependencies: ["NVRPlayback", "NVRIndex"], swiftSettings: swiftSettings),
        .testTarget(
            name: "NVRHTTPTests",
            dependencies: [
                "NVRHTTP", "NVRPlayback", "NVRCommands", "NVRRecorder", "NVRPluginHost", "NVRStorage", "NVRIndex",
                "NVRMedia", "NVRTime", "NVRAccess", "NVRDetect", "NVRCameras", "TestSupport", "CamSim", "GoProAPI",
                "Insta360API", "TuyaAPI",
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: swiftSettings),
        // The vendor protocols (Insta360 OSC, Tuya cloud and LAN) against their references and simulators, with no
        // recorder. (GoProAPITests stays in NVRHTTPTests: one of its checks drives the simulator through a recording.)
        .testTarget(
            name: "PluginProtocolTests",
            dependencies: ["CamSim", "Insta360API", "TuyaAPI", "ONVIFAPI", "PluginSupport", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "NVRCoreTests",
            dependencies: [
                "NVRCameras", "NVRTime", "NVRRecorder", "NVRPluginHost", "NVRStorage", "NVRPlayback", "NVRCommands",
                "NVRIndex", "NVRIndexPostgres", "NVRCluster", "NVRMedia", "CNVRPlugin", "NVRDetect", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ], swiftSettings: swiftSettings),
    ]
)
