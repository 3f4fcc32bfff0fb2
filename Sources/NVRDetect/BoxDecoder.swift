import Foundation

/// Turns a model's raw outputs into detections, per layout (ModelLayout). Pure arithmetic on
/// the outputs, which are untrusted: a non-finite value or an absurd box is skipped, never
/// trapped on.
public enum BoxDecoder {
    /// SSD box-coder scales for (ty, tx, th, tw), as TensorFlow's SSD models are trained.
    static let ssdScales: (y: Float, x: Float, h: Float, w: Float) = (10, 10, 5, 5)
    /// exp() of a box code beyond this would make a box far larger than the picture.
    static let maxLogSize: Float = 8

    /// SSD: `codes` [N×4], `logits` [N×(classes+1)] with class 0 the background, `anchors`
    /// [N×4] as (ymin, xmin, ymax, xmax). `label(c)` names class c (1-based); nil skips it.
    public static func ssd(
        codes: [Float], logits: [Float], anchors: [Float], classes: Int, minScore: Double,
        label: (Int) -> String?
    ) -> [Detection] {
        let n = anchors.count / 4
        let stride = classes + 1
        guard classes > 0, codes.count >= n * 4, logits.count >= n * stride else { return [] }
        // Compare logits, not scores: sigmoid is monotonic, and most anchors fail the test.
        let p = min(max(minScore, 1e-6), 1 - 1e-6)
        let minLogit = Float(log(p / (1 - p)))
        var out: [Detection] = []
        for i in 0..<n {
            for c in 1...classes {
                let logit = logits[i * stride + c]
                guard logit.isFinite, logit >= minLogit, let name = label(c) else { continue }
                let a = i * 4
                let (ymin, xmin, ymax, xmax) = (anchors[a], anchors[a + 1], anchors[a + 2], anchors[a + 3])
                let ha = ymax - ymin
                let wa = xmax - xmin
                let ty = codes[a] / ssdScales.y
                let tx = codes[a + 1] / ssdScales.x
                let th = codes[a + 2] / ssdScales.h
                let tw = codes[a + 3] / ssdScales.w
                guard ha > 0, wa > 0, [ty, tx, th, tw].allSatisfy({ $0.isFinite }), th < maxLogSize, tw < maxLogSize
                else { continue }
                let h = exp(th) * ha
                let w = exp(tw) * wa
                let yc = ty * ha + (ymin + ymax) / 2
                let xc = tx * wa + (xmin + xmax) / 2
                let box = Box(x: Double(xc - w / 2), y: Double(yc - h / 2), width: Double(w), height: Double(h)).clipped
                guard box.area > 0 else { continue }
                out.append(Detection(label: name, score: 1 / (1 + exp(-Double(logit))), box: box))
            }
        }
        return out
    }

    /// YOLOX: `rows` [cells×(5+classes)] over strides 8, 16, 32 of a `width`×`height` input.
    /// `label(c)` names class c (0-based); nil skips it.
    public static func yolox(
        rows: [Float], width: Int, height: Int, classes: Int, minScore: Double, label: (Int) -> String?
    ) -> [Detection] {
        let stride = 5 + classes
        guard classes > 0, width > 0, height > 0 else { return [] }
        var out: [Detection] = []
        var row = 0
        for s in ModelLayout.yoloxStrides {
            let gw = width / s
            let gh = height / s
            for gy in 0..<gh {
                for gx in 0..<gw {
                    defer { row += 1 }
                    let r = row * stride
                    guard r + stride <= rows.count else { return out }
                    let objectness = rows[r + 4]
                    guard objectness.isFinite, Double(objectness) >= minScore else { continue }
                    for c in 0..<classes {
                        let score = Double(objectness * rows[r + 5 + c])
                        guard score.isFinite, score >= minScore, let name = label(c) else { continue }
                        let (dx, dy, lw, lh) = (rows[r], rows[r + 1], rows[r + 2], rows[r + 3])
                        guard [dx, dy, lw, lh].allSatisfy({ $0.isFinite }), lw < maxLogSize, lh < maxLogSize else {
                            continue
                        }
                        let cx = (dx + Float(gx)) * Float(s)
                        let cy = (dy + Float(gy)) * Float(s)
                        let w = exp(lw) * Float(s)
                        let h = exp(lh) * Float(s)
                        let box = Box(
                            x: Double(cx - w / 2) / Double(width), y: Double(cy - h / 2) / Double(height),
                            width: Double(w) / Double(width), height: Double(h) / Double(height)
                        ).clipped
                        guard box.area > 0 else { continue }
                        out.append(Detection(label: name, score: min(score, 1), box: box))
                    }
                }
            }
        }
        return out
    }
}
