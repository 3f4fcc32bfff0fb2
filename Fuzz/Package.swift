// swift-tools-version: 6.0
// libFuzzer builds of the NVR's parsers, apart from the main package so its ordinary builds
// never see -sanitize=fuzzer. Built and run by bench/fuzz/run.sh (make fuzz):
//   swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product nvr-fuzz
//   NVR_FUZZ_TARGET=sdp .build/release/nvr-fuzz CORPUS_DIR -max_total_time=60
import PackageDescription

let package = Package(
    name: "nvr-fuzz",
    platforms: [.macOS(.v14)],
    products: [.executable(name: "nvr-fuzz", targets: ["nvr-fuzz"])],
    dependencies: [.package(name: "nvr", path: "..")],
    targets: [
        .executableTarget(
            name: "nvr-fuzz", dependencies: [.product(name: "NVRFuzzTargets", package: "nvr")], path: "Runner")
    ]
)
