import CONNXRuntime
import Foundation

/// One loaded model: an ONNX Runtime session on one thread (the detector worker's), its inputs
/// and outputs with their shapes, and `run`, which feeds float tensors and copies the outputs.
public final class ONNXSession {
    /// A tensor's name, element count and shape (-1 where the model leaves a dimension open).
    public struct Tensor: Sendable, Equatable {
        public var name: String
        public var shape: [Int64]
    }

    let runtime: ONNXRuntime
    private let session: OpaquePointer
    private let memory: OpaquePointer
    public let inputs: [Tensor]
    public let outputs: [Tensor]
    private let inputNames: [UnsafeMutablePointer<CChar>]
    private let outputNames: [UnsafeMutablePointer<CChar>]

    /// Loads a model from its bytes (read by the caller, so a missing file is the caller's
    /// message), on `threads` threads. Throws when ONNX Runtime cannot load it (corrupt, or an
    /// operator it lacks) or a tensor is not float.
    public init(runtime: ONNXRuntime, model: Data, threads: Int = 1) throws {
        self.runtime = runtime
        let api = runtime.api.pointee
        var options: OpaquePointer?
        try runtime.check(try ONNXRuntime.member(api.CreateSessionOptions)(&options))
        guard let options else { throw DetectError("ONNX Runtime made no session options") }
        defer { api.ReleaseSessionOptions?(options) }
        try runtime.check(try ONNXRuntime.member(api.SetIntraOpNumThreads)(options, Int32(max(1, threads))))
        try runtime.check(try ONNXRuntime.member(api.SetInterOpNumThreads)(options, 1))
        try runtime.check(try ONNXRuntime.member(api.SetSessionGraphOptimizationLevel)(options, ORT_ENABLE_ALL))
        var session: OpaquePointer?
        let create = try ONNXRuntime.member(api.CreateSessionFromArray)
        try model.withUnsafeBytes { bytes in
            try runtime.check(create(runtime.env, bytes.baseAddress, bytes.count, options, &session))
        }
        guard let session else { throw DetectError("ONNX Runtime made no session") }
        self.session = session
        var memory: OpaquePointer?
        do {
            try runtime.check(
                try ONNXRuntime.member(api.CreateCpuMemoryInfo)(OrtArenaAllocator, OrtMemTypeDefault, &memory))
        } catch {
            api.ReleaseSession?(session)
            throw error
        }
        guard let memory else {
            api.ReleaseSession?(session)
            throw DetectError("ONNX Runtime made no memory info")
        }
        self.memory = memory
        do {
            let (inputs, inNames) = try Self.describe(runtime, session, input: true)
            let outputs: [Tensor]
            let outNames: [UnsafeMutablePointer<CChar>]
            do { (outputs, outNames) = try Self.describe(runtime, session, input: false) } catch {
                for n in inNames { free(n) }
                throw error
            }
            self.inputs = inputs
            self.outputs = outputs
            inputNames = inNames
            outputNames = outNames
        } catch {
            api.ReleaseMemoryInfo?(memory)
            api.ReleaseSession?(session)
            throw error
        }
    }

    deinit {
        let api = runtime.api.pointee
        for n in inputNames + outputNames { free(n) }
        api.ReleaseMemoryInfo?(memory)
        api.ReleaseSession?(session)
    }

    /// The names and shapes of the model's inputs or outputs (names copied to malloc'd C strings
    /// for `run`).
    private static func describe(_ runtime: ONNXRuntime, _ session: OpaquePointer, input: Bool) throws -> (
        [Tensor], [UnsafeMutablePointer<CChar>]
    ) {
        let api = runtime.api.pointee
        var count = 0
        try runtime.check(
            try ONNXRuntime.member(input ? api.SessionGetInputCount : api.SessionGetOutputCount)(session, &count))
        guard count <= 16 else { throw DetectError("the model has \(count) \(input ? "inputs" : "outputs")") }
        var allocator: OpaquePointer?
        try runtime.check(try ONNXRuntime.member(api.GetAllocatorWithDefaultOptions)(&allocator))
        var tensors: [Tensor] = []
        var names: [UnsafeMutablePointer<CChar>] = []
        // The names copied so far are freed when a later tensor is refused.
        var done = false
        defer { if !done { for n in names { free(n) } } }
        for i in 0..<count {
            var cName: UnsafeMutablePointer<CChar>?
            try runtime.check(
                try ONNXRuntime.member(input ? api.SessionGetInputName : api.SessionGetOutputName)(
                    session, i, allocator, &cName))
            guard let cName else { throw DetectError("a model tensor has no name") }
            let name = String(cString: cName)
            if let status = api.AllocatorFree?(allocator, cName) { api.ReleaseStatus?(status) }
            guard let copy = strdup(name) else { throw DetectError("out of memory") }
            names.append(copy)
            var typeInfo: OpaquePointer?
            try runtime.check(
                try ONNXRuntime.member(input ? api.SessionGetInputTypeInfo : api.SessionGetOutputTypeInfo)(
                    session, i, &typeInfo))
            defer { api.ReleaseTypeInfo?(typeInfo) }
            var info: OpaquePointer?
            try runtime.check(try ONNXRuntime.member(api.CastTypeInfoToTensorInfo)(typeInfo, &info))
            guard let info else { throw DetectError("the model's \(name) is not a tensor") }
            var type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
            try runtime.check(try ONNXRuntime.member(api.GetTensorElementType)(info, &type))
            guard type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT else {
                throw DetectError("the model's \(name) is not float32 (ONNX type \(type.rawValue))")
            }
            var rank = 0
            try runtime.check(try ONNXRuntime.member(api.GetDimensionsCount)(info, &rank))
            guard rank <= 8 else { throw DetectError("the model's \(name) has \(rank) dimensions") }
            var dims = [Int64](repeating: 0, count: rank)
            try runtime.check(try ONNXRuntime.member(api.GetDimensions)(info, &dims, rank))
            tensors.append(Tensor(name: name, shape: dims))
        }
        done = true
        return (tensors, names)
    }

    /// Runs the model on one float input of the given shape; returns each output's values and
    /// shape. The input is read in place (not copied).
    public func run(input: UnsafeMutableBufferPointer<Float>, shape: [Int64]) throws -> [(
        values: [Float], shape: [Int]
    )] {
        let api = runtime.api.pointee
        var value: OpaquePointer?
        try runtime.check(
            try ONNXRuntime.member(api.CreateTensorWithDataAsOrtValue)(
                memory, input.baseAddress, input.count * MemoryLayout<Float>.stride, shape, shape.count,
                ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &value))
        defer { api.ReleaseValue?(value) }
        var results = [OpaquePointer?](repeating: nil, count: outputNames.count)
        defer { for r in results { api.ReleaseValue?(r) } }
        let inNames: [UnsafePointer<CChar>?] = inputNames.map { UnsafePointer($0) }
        let outNames: [UnsafePointer<CChar>?] = outputNames.map { UnsafePointer($0) }
        let inputs: [OpaquePointer?] = [value]
        try runtime.check(
            try ONNXRuntime.member(api.Run)(session, nil, inNames, inputs, 1, outNames, outNames.count, &results))
        var out: [(values: [Float], shape: [Int])] = []
        for r in results {
            guard let r else { throw DetectError("the model gave no output") }
            var info: OpaquePointer?
            try runtime.check(try ONNXRuntime.member(api.GetTensorTypeAndShape)(r, &info))
            defer { api.ReleaseTensorTypeAndShapeInfo?(info) }
            var rank = 0
            try runtime.check(try ONNXRuntime.member(api.GetDimensionsCount)(info, &rank))
            guard rank <= 8 else { throw DetectError("an output has \(rank) dimensions") }
            var dims = [Int64](repeating: 0, count: rank)
            try runtime.check(try ONNXRuntime.member(api.GetDimensions)(info, &dims, rank))
            var count = 0
            try runtime.check(try ONNXRuntime.member(api.GetTensorShapeElementCount)(info, &count))
            guard count <= 16_000_000 else { throw DetectError("an output has \(count) values") }
            var data: UnsafeMutableRawPointer?
            try runtime.check(try ONNXRuntime.member(api.GetTensorMutableData)(r, &data))
            guard let data else { throw DetectError("an output has no data") }
            let floats = data.bindMemory(to: Float.self, capacity: count)
            out.append((Array(UnsafeBufferPointer(start: floats, count: count)), dims.map { Int($0) }))
        }
        return out
    }
}
