import Foundation
import NVRFuzzTargets

// libFuzzer calls this for every input; NVR_FUZZ_TARGET names the parser under test
// (FuzzTargets.names). Built with -parse-as-library: libFuzzer provides main.

private let target: FuzzTargets.Target = {
    let name = ProcessInfo.processInfo.environment["NVR_FUZZ_TARGET"] ?? ""
    guard let t = FuzzTargets.all[name] else {
        FileHandle.standardError.write(
            Data("NVR_FUZZ_TARGET must be one of: \(FuzzTargets.names.joined(separator: " "))\n".utf8))
        exit(2)
    }
    return t
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

// SwiftPM links an executable with `main` defined as `<module>_main` (so tests can link
// executables); libFuzzer's own driver is reached from there.
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("nvr_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var args = argv
    return runDriver(&count, &args) { data, size in fuzzOneInput(data, size) }
}
