import Foundation
import NVRMedia
import NVRPluginHost

/// Reads a card file through the plugin in blocks, so libavformat's small reads and seeks
/// become a few HTTP Range requests, and counts what was fetched.
final class CardFileReader: RandomAccessSource {
    let size: Int64
    private let instance: PluginInstance
    private let fileID: String
    private let blockSize: Int64 = 1 << 20
    private var blocks: [(index: Int64, data: [UInt8])] = []  // most recent last
    private let maxBlocks = 8
    private let isCancelled: () -> Bool
    /// Bytes fetched from the camera so far.
    private(set) var fetched: Int64 = 0

    init(instance: PluginInstance, fileID: String, size: Int64, isCancelled: @escaping () -> Bool) {
        self.instance = instance
        self.fileID = fileID
        self.size = size
        self.isCancelled = isCancelled
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, buffer.count > 0 else { return 0 }
        let index = offset / blockSize
        let block = try self.block(index)
        let within = Int(offset - index * blockSize)
        let n = min(buffer.count, block.count - within)
        guard n > 0 else { return 0 }
        block.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + within, byteCount: n) }
        return n
    }

    private func block(_ index: Int64) throws -> [UInt8] {
        if let i = blocks.firstIndex(where: { $0.index == index }) {
            let b = blocks.remove(at: i)
            blocks.append(b)
            return b.data
        }
        if isCancelled() { throw PluginError("stopped") }
        let start = index * blockSize
        let length = min(blockSize, size - start)
        var data: [UInt8] = []
        data.reserveCapacity(Int(length))
        let cancelled = isCancelled
        let complete = try instance.cardRead(id: fileID, offset: start, length: length) { chunk in
            // A plugin that sends more than was asked is cut off at the block's end.
            let room = Int(length) - data.count
            data.append(contentsOf: chunk.prefix(max(room, 0)))
            return !cancelled() && data.count < Int(length)
        }
        if !complete && Int64(data.count) != length { throw PluginError("stopped") }
        guard Int64(data.count) == length else {
            throw PluginError("card file \(fileID): asked for \(length) bytes at \(start), got \(data.count)")
        }
        fetched += length
        blocks.append((index, data))
        if blocks.count > maxBlocks { blocks.removeFirst() }
        return data
    }
}
