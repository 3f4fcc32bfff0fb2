import CONNXRuntime
import Foundation

/// ONNX Runtime's C API, loaded with dlopen: the NVR builds and runs without it, and says what
/// is missing when a camera asks for detection. The library ships in the `onnxruntime` PyPI
/// wheel (`onnxruntime/capi/libonnxruntime.so.*`); `scripts/install-deps.sh` copies it to
/// /usr/local/lib/nvr. Where it is looked for: `candidates(explicit:)`.
public final class ONNXRuntime: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the C API's functions may be called from any thread.
    let api: UnsafePointer<OrtApi>
    let env: OpaquePointer
    /// The library's own version string, e.g. "1.26.0".
    public let version: String
    /// Where it was loaded from.
    public let path: String

    /// Loads the first library found among the candidates. Throws one line a person can act on.
    public init(explicit: String? = nil) throws {
        var tried: [String] = []
        for path in Self.candidates(explicit: explicit) {
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                if explicit != nil || path.hasPrefix("/") && FileManager.default.fileExists(atPath: path) {
                    tried.append(String(cString: dlerror()))
                }
                continue
            }
            guard let symbol = dlsym(handle, "OrtGetApiBase") else {
                tried.append("\(path) has no OrtGetApiBase: not ONNX Runtime")
                // Not closed: a library written in Swift registers its type metadata with the
                // runtime, which would point into unmapped memory after dlclose (a test that
                // took one of the NVR's plugins for ONNX Runtime crashed so, once in CI).
                continue
            }
            let getBase = unsafeBitCast(symbol, to: OrtGetApiBaseFunction.self)
            guard let base = getBase(), let getApi = base.pointee.GetApi,
                let api = getApi(UInt32(NVR_ORT_API_VERSION))
            else {
                tried.append("\(path) is older than ONNX Runtime 1.13")
                continue  // not closed either: see above
            }
            self.api = api
            self.path = path
            version = base.pointee.GetVersionString.flatMap { $0() }.map { String(cString: $0) } ?? "?"
            var env: OpaquePointer?
            try Self.check(api, try Self.member(api.pointee.CreateEnv)(ORT_LOGGING_LEVEL_ERROR, "nvr", &env))
            guard let env else { throw DetectError("ONNX Runtime made no environment") }
            self.env = env
            return  // never dlclosed: sessions and the environment live as long as the process
        }
        let hint = "install it with scripts/install-deps.sh (or pip install onnxruntime) or set detect.runtime"
        if let explicit {
            throw DetectError("cannot load ONNX Runtime from \(explicit): \(tried.last ?? "not found")")
        }
        throw DetectError(
            tried.isEmpty
                ? "ONNX Runtime (libonnxruntime.so) not found: \(hint)"
                : "ONNX Runtime not loaded (\(tried.joined(separator: "; "))): \(hint)")
    }

    /// Where the library is looked for, in order: the configured path (only it, when given);
    /// NVR_ONNXRUNTIME; ../lib/nvr beside the executable (the Debian package's own, for
    /// /usr/bin/nvr); /usr/local/lib/nvr (scripts/install-deps.sh) and /usr/lib/nvr; the dynamic
    /// loader's own path; the onnxruntime wheel in Python's site-packages.
    public static func candidates(explicit: String?, executable: String = "/proc/self/exe") -> [String] {
        if let explicit { return [explicit] }
        var out: [String] = []
        if let env = ProcessInfo.processInfo.environment["NVR_ONNXRUNTIME"], !env.isEmpty { out.append(env) }
        let bin = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        let beside = bin.deletingLastPathComponent().appendingPathComponent("lib/nvr").path
        for dir in [beside, "/usr/local/lib/nvr", "/usr/lib/nvr"]
        where !out.contains(where: { $0.hasPrefix(dir + "/") }) {
            out += libraries(in: dir)
        }
        out.append("libonnxruntime.so")
        var sitePackages: [String] = []
        for root in ["/usr/local/lib", "/usr/lib", NSHomeDirectory() + "/.local/lib"] {
            let pythons = (try? FileManager.default.contentsOfDirectory(atPath: root))?.filter {
                $0.hasPrefix("python3")
            }
            for p in (pythons ?? []).sorted() {
                sitePackages += ["\(root)/\(p)/dist-packages", "\(root)/\(p)/site-packages"]
            }
        }
        for sp in sitePackages { out += libraries(in: "\(sp)/onnxruntime/capi") }
        return out
    }

    /// libonnxruntime.so* in a folder, newest name first.
    static func libraries(in dir: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { $0.hasPrefix("libonnxruntime.so") }.sorted(by: >).map { "\(dir)/\($0)" }
    }

    /// Turns a non-nil status into an error (and releases it).
    static func check(_ api: UnsafePointer<OrtApi>, _ status: OpaquePointer?) throws {
        guard let status else { return }
        let message = api.pointee.GetErrorMessage.flatMap { $0(status) }.map { String(cString: $0) } ?? "unknown error"
        api.pointee.ReleaseStatus?(status)
        throw DetectError(message)
    }

    func check(_ status: OpaquePointer?) throws { try Self.check(api, status) }

    /// A member of the runtime's function table (nil only in a broken library).
    static func member<F>(_ f: F?) throws -> F {
        guard let f else { throw DetectError("ONNX Runtime's C API lacks a function the NVR uses") }
        return f
    }
}

/// What went wrong with detection, in one line a person can act on.
public struct DetectError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
