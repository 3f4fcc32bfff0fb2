import Foundation

/// Unzips `zip` into `zip.d` after both Info-ZIP's `unzip -t` and Python's zipfile checked
/// every entry's CRC; returns the folder and each entry's size. Throws if either reader
/// complains, or an entry is compressed (exports store MP4s as they are).
public func unzipChecked(_ zip: String) throws -> (dir: String, entries: [String: Int]) {
    let test = try runProcess("/usr/bin/unzip", ["-t", zip])
    guard test.status == 0 else { throw FixtureError("unzip -t \(zip): \(test.stdout) \(test.stderr)") }
    let py = try runProcess(
        "/usr/bin/python3",
        [
            "-c",
            """
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            bad = z.testzip()
            if bad: sys.exit("bad CRC: " + bad)
            for i in z.infolist(): print(i.filename, i.file_size, i.compress_type)
            """, zip,
        ])
    guard py.status == 0 else { throw FixtureError("Python's zipfile refuses \(zip): \(py.stderr)") }
    var entries: [String: Int] = [:]
    for line in py.stdout.split(separator: "\n") {
        let f = line.split(separator: " ")
        guard f.count == 3, let size = Int(f[1]), f[2] == "0" else { throw FixtureError("not a stored entry: \(line)") }
        entries[String(f[0])] = size
    }
    let dir = zip + ".d"
    let x = try runProcess("/usr/bin/unzip", ["-q", "-o", zip, "-d", dir])
    guard x.status == 0 else { throw FixtureError("unzip \(zip): \(x.stderr)") }
    return (dir, entries)
}
