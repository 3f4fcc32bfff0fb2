/// A rectangle in normalised picture coordinates: 0…1 from the top left.
public struct Box: Codable, Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var area: Double { max(width, 0) * max(height, 0) }

    /// Intersection over union: 0 (apart) … 1 (the same box).
    public func iou(_ o: Box) -> Double {
        let w = min(x + width, o.x + o.width) - max(x, o.x)
        let h = min(y + height, o.y + o.height) - max(y, o.y)
        guard w > 0, h > 0 else { return 0 }
        let inter = w * h
        let union = area + o.area - inter
        return union > 0 ? inter / union : 0
    }

    /// The box clipped to the picture.
    public var clipped: Box {
        let x0 = min(max(x, 0), 1)
        let y0 = min(max(y, 0), 1)
        let x1 = min(max(x + width, 0), 1)
        let y1 = min(max(y + height, 0), 1)
        return Box(x: x0, y: y0, width: max(x1 - x0, 0), height: max(y1 - y0, 0))
    }

    /// A box given in a crop's coordinates, in the coordinates of the picture the crop is of.
    public func placed(in crop: Box) -> Box {
        Box(
            x: crop.x + x * crop.width, y: crop.y + y * crop.height, width: width * crop.width,
            height: height * crop.height)
    }

    /// The middle of the bottom edge: where an object stands (zones test this point).
    public var foot: (x: Double, y: Double) { (x + width / 2, y + height) }
}

/// One thing the model found in a picture.
public struct Detection: Sendable, Equatable {
    public var label: String
    public var score: Double
    public var box: Box

    public init(label: String, score: Double, box: Box) {
        self.label = label
        self.score = score
        self.box = box
    }

    /// Greedy non-maximum suppression per label: the best box of each overlapping group stays.
    public static func suppress(_ found: [Detection], iou limit: Double = 0.5, keep: Int = 50) -> [Detection] {
        var kept: [Detection] = []
        for d in found.sorted(by: { $0.score > $1.score }) {
            guard kept.count < keep else { break }
            if kept.contains(where: { $0.label == d.label && $0.box.iou(d.box) > limit }) { continue }
            kept.append(d)
        }
        return kept
    }
}
