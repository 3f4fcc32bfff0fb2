import Foundation
import NVRPlayback
import TestSupport
import Testing

/// An export past 4 GiB: an entry of 4 GiB and more, and one whose header starts past 4 GiB,
/// read back by unzip (every CRC) and Python's zipfile. The big entry is a sparse file and the
/// archive is written sparse (runs of zeros skipped), so the test reads and checks 4 GiB but
/// writes little to disk. A system suite: it takes tens of seconds.
@Suite(.serialized, .tags(.system)) struct Zip64Tests {
    @Test func anEntryOfMoreThan4GiBAndOneStartingPastIt() throws {
        let dir = TestEnvironment.tempDir("zip64")
        defer { TestEnvironment.cleanup(dir) }
        let big = dir + "/big.bin"
        let size = Int64(UInt32.max) + (3 << 20)
        // Zeros with a few bytes set at both ends and past 4 GiB, so the CRC covers real data.
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fd = open(big, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        try #require(fd >= 0)
        for (offset, text) in [(Int64(0), "start"), (Int64(UInt32.max) + 10, "past 4 GiB"), (size - 3, "end")] {
            let bytes = Array(text.utf8)
            #expect(pwrite(fd, bytes, bytes.count, off_t(offset)) == bytes.count)
        }
        #expect(ftruncate(fd, off_t(size)) == 0)
        close(fd)

        let archive = try ZipArchive(entries: [
            .init(name: "small.txt", parts: [.bytes(Array("before\n".utf8))], modified: 1_790_000_000),
            .init(name: "big.bin", parts: [.file(path: big, offset: 0, length: size)], modified: 1_790_000_000),
            .init(name: "after.txt", parts: [.bytes(Array("after\n".utf8))], modified: 1_790_000_000),
        ])
        // Streamed as the HTTP answer streams it; all-zero chunks become holes in the file.
        let zip = dir + "/export.zip"
        let out = open(zip, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        try #require(out >= 0)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var reader = archive.reader()
        var at: Int64 = 0
        while let chunk = try reader.next() {
            let hole = chunk.count <= zeros.count && memcmp(chunk, zeros, chunk.count) == 0
            if !hole { #expect(pwrite(out, chunk, chunk.count, off_t(at)) == chunk.count) }
            at += Int64(chunk.count)
        }
        #expect(ftruncate(out, off_t(at)) == 0)
        close(out)
        #expect(at == archive.size, "streamed \(at) bytes of a \(archive.size)-byte archive")

        let test = try runProcess("/usr/bin/unzip", ["-t", zip])
        #expect(test.status == 0 && test.stdout.contains("No errors detected"), "\(test.stdout) \(test.stderr)")
        let py = try runProcess(
            "/usr/bin/python3",
            [
                "-c",
                """
                import sys, zipfile
                z = zipfile.ZipFile(sys.argv[1])
                for i in z.infolist(): print(i.filename, i.file_size, i.header_offset)
                print(z.read("after.txt").decode().strip())
                """, zip,
            ])
        #expect(py.status == 0, "\(py.stderr)")
        let lines = py.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(py.stdout)")
        #expect(lines.first?.hasPrefix("small.txt 7 0") == true, "\(py.stdout)")
        #expect(lines.dropFirst().first?.hasPrefix("big.bin \(size) ") == true, "\(py.stdout)")
        let afterOffset = lines.dropFirst(2).first?.split(separator: " ").last.flatMap { Int64($0) } ?? 0
        #expect(afterOffset > Int64(UInt32.max), "after.txt's header at \(afterOffset)")
        #expect(lines.last == "after", "\(py.stdout)")
    }
}
