import Foundation

/// How a detector's outputs are to be read (design/detection.md). Recognised from the outputs'
/// shapes, so a model file needs no side file:
///
/// - `ssd`: three outputs — box codes [1, N, 4] (ty, tx, th, tw), class logits [1, N, C] with
///   class 0 the background, anchors [N, 4] as corners (ymin, xmin, ymax, xmax). Box-coder
///   scales 10, 10, 5, 5; a sigmoid turns a logit into a score. TensorFlow's SSD models cut
///   before their post-processing (scripts/convert-person-model.py makes the built-in one).
/// - `yolox`: one output [1, N, 5 + C], rows (x, y, w, h, objectness, class scores…) in grid
///   units over strides 8, 16 and 32 (N = the grid cells of all three); score = objectness ×
///   class score, both already through their sigmoid, as Megvii's YOLOX exports them.
///
/// The input is [1, 3, H, W] float, RGB (or BGR, `channelOrder`), 0…255 unless the model
/// scales it itself.
public enum ModelLayout: Sendable, Equatable {
    case ssd(anchors: Int, classes: Int)
    case yolox(cells: Int, classes: Int)

    /// Recognises the layout from the output shapes; throws naming what does not fit.
    public static func recognise(outputs: [[Int64]], inputWidth: Int, inputHeight: Int) throws -> ModelLayout {
        if outputs.count == 3, outputs[0].count == 3, outputs[0][2] == 4, outputs[1].count == 3,
            outputs[2].count == 2, outputs[2][1] == 4
        {
            let n = outputs[0][1]
            guard n > 0, outputs[1][1] == n, outputs[2][0] == n, outputs[1][2] >= 2, outputs[1][2] <= 1000 else {
                throw DetectError("the model's SSD outputs disagree: \(describe(outputs))")
            }
            return .ssd(anchors: Int(n), classes: Int(outputs[1][2]) - 1)
        }
        if outputs.count == 1, outputs[0].count == 3, outputs[0][2] >= 6, outputs[0][2] <= 1005 {
            let cells = yoloxCells(width: inputWidth, height: inputHeight)
            guard outputs[0][1] == Int64(cells) else {
                throw DetectError(
                    "the model's output has \(outputs[0][1]) rows; a YOLOX model of \(inputWidth)x\(inputHeight) has \(cells)"
                )
            }
            return .yolox(cells: cells, classes: Int(outputs[0][2]) - 5)
        }
        throw DetectError(
            "the model's outputs \(describe(outputs)) are neither the ssd nor the yolox layout (design/detection.md)")
    }

    public var classes: Int {
        switch self {
        case .ssd(_, let c), .yolox(_, let c): c
        }
    }

    public var name: String {
        switch self {
        case .ssd: "ssd"
        case .yolox: "yolox"
        }
    }

    static let yoloxStrides = [8, 16, 32]

    static func yoloxCells(width: Int, height: Int) -> Int {
        yoloxStrides.reduce(0) { $0 + (width / $1) * (height / $1) }
    }

    static func describe(_ outputs: [[Int64]]) -> String {
        outputs.map { "[" + $0.map(String.init).joined(separator: ", ") + "]" }.joined(separator: " ")
    }
}
