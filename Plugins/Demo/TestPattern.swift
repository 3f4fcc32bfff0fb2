/// Draws the demo camera's picture into YUV 4:2:0 planes: a fixed gradient, a box that
/// moves across it, and the wall-clock time burned in as large digits.
struct TestPattern {
    let width: Int, height: Int
    private var background: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        background = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width { background[y * width + x] = UInt8(40 + (x * 120 / width) + (y * 60 / height)) }
        }
    }

    /// Draws frame `n` (of `fps` per second) showing `clock` ("HH:MM:SS").
    func draw(
        frame n: Int, fps: Int, clock: String, y: UnsafeMutablePointer<UInt8>, yStride: Int,
        u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>, uvStride: Int
    ) {
        background.withUnsafeBufferPointer { bg in
            for row in 0..<height { (y + row * yStride).update(from: bg.baseAddress! + row * width, count: width) }
        }
        for row in 0..<(height / 2) {
            (u + row * uvStride).update(repeating: 128, count: width / 2)
            (v + row * uvStride).update(repeating: 128, count: width / 2)
        }
        // A box crossing the picture every 4 seconds, bouncing vertically.
        let box = max(height / 6, 8)
        let period = max(fps * 4, 1)
        let bx = (n % period) * (width - box) / period
        let phase = n % (period * 2)
        let by = (phase < period ? phase : period * 2 - phase) * (height - box) / period
        for row in by..<(by + box) {
            (y + row * yStride + bx).update(repeating: 235, count: box)
        }
        for row in (by / 2)..<((by + box) / 2) {
            (u + row * uvStride + bx / 2).update(repeating: 90, count: box / 2)
            (v + row * uvStride + bx / 2).update(repeating: 240, count: box / 2)
        }
        // The clock, bottom left.
        let scale = max(height / 60, 2)
        var x0 = scale * 2
        let y0 = height - scale * 8
        for ch in clock.utf8 {
            let glyph = Self.font[ch] ?? Self.font[UInt8(ascii: " ")]!
            for gy in 0..<5 {
                for gx in 0..<3 where glyph[gy] & (4 >> gx) != 0 {
                    for dy in 0..<scale {
                        let row = y0 + gy * scale + dy
                        guard row < height else { continue }
                        (y + row * yStride + x0 + gx * scale).update(repeating: 16, count: scale)
                    }
                }
            }
            x0 += scale * 4
            if x0 + scale * 3 >= width { break }
        }
    }

    /// 3×5 glyphs, one row per byte, bit 2 = left column.
    static let font: [UInt8: [UInt8]] = [
        UInt8(ascii: "0"): [7, 5, 5, 5, 7], UInt8(ascii: "1"): [2, 6, 2, 2, 7], UInt8(ascii: "2"): [7, 1, 7, 4, 7],
        UInt8(ascii: "3"): [7, 1, 7, 1, 7], UInt8(ascii: "4"): [5, 5, 7, 1, 1], UInt8(ascii: "5"): [7, 4, 7, 1, 7],
        UInt8(ascii: "6"): [7, 4, 7, 5, 7], UInt8(ascii: "7"): [7, 1, 1, 1, 1], UInt8(ascii: "8"): [7, 5, 7, 5, 7],
        UInt8(ascii: "9"): [7, 5, 7, 1, 7], UInt8(ascii: ":"): [0, 2, 0, 2, 0], UInt8(ascii: "-"): [0, 0, 7, 0, 0],
        UInt8(ascii: " "): [0, 0, 0, 0, 0], UInt8(ascii: "."): [0, 0, 0, 0, 2],
    ]
}
