#!/usr/bin/env python3
"""Writes small ONNX detectors whose outputs are known, for DetectorModelTests: each ignores
its picture (its outputs are constants plus 0 × the picture's mean, so they depend on the
input as a real model's do) and answers in one of the layouts of design/detection.md.

  .build/test-venv/bin/python Tests/Support/make_test_models.py OUTDIR

ssd.onnx     input [1,3,64,64]; boxes [1,4,4], scores [1,4,3] (background + 2 classes),
             anchors [4,4]. Anchor 0: class 1 at logit 2 (0.881), the box the anchor itself
             (x 0.1, y 0.1, w 0.2, h 0.4). Anchor 1: class 2 at logit 3 (0.953), the same anchor
             moved down by ty = 1 (a tenth of its height, 0.04) and twice as wide (tw = 5 ln 2):
             x 0, y 0.14, w 0.4, h 0.4. Anchor 2: class 1 at
             logit 1 (0.731), the same box as anchor 0 (suppressed). Anchor 3: nothing.
yolox.onnx   input [1,3,64,64]; output [1,84,7] (strides 8, 16, 32; 2 classes). Row 26 (stride 8,
             gx 2, gy 3): class 1, 0.9 × 0.8 = 0.72, centre (20, 28), 16 × 32 pixels. Row 82
             (stride 32, gx 0, gy 1): class 0, 0.7 × 0.9 = 0.63, centre (16, 48), 32 × 32.
wrong.onnx   input [1,3,64,64]; one output [1,10]: neither layout.
grey.onnx    input [1,1,64,64]: not a colour picture.
huge.onnx    input [1,3,4096,4096]: larger than the 2048 pixels a side the NVR takes.
ints.onnx    input [1,3,64,64]; the ssd outputs, but the scores as int64: not float.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(inputs_shape, outputs, int_outputs=()):
    """outputs: [(name, array)]: each output = array + 0 × mean(image); those named in
    int_outputs are cast to int64."""
    nodes = [
        helper.make_node("ReduceMean", ["image"], ["mean"], keepdims=0),
        helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.float32), "zero")]
    outs = []
    for name, value in outputs:
        inits.append(numpy_helper.from_array(value.astype(np.float32), name + "_value"))
        if name in int_outputs:
            nodes.append(helper.make_node("Add", [name + "_value", "nothing"], [name + "_float"]))
            nodes.append(helper.make_node("Cast", [name + "_float"], [name], to=TensorProto.INT64))
            outs.append(helper.make_tensor_value_info(name, TensorProto.INT64, list(value.shape)))
            continue
        nodes.append(helper.make_node("Add", [name + "_value", "nothing"], [name]))
        outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape)))
    graph = helper.make_graph(
        nodes, "test", [helper.make_tensor_value_info("image", TensorProto.FLOAT, inputs_shape)], outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    anchors = np.array([[0.1, 0.1, 0.5, 0.3]] * 4)  # ymin, xmin, ymax, xmax
    codes = np.zeros((1, 4, 4))
    codes[0, 1] = [1.0, 0, 0, 5 * math.log(2)]  # ty = 1/10 of the anchor's height; w × 2
    logits = np.full((1, 4, 3), -5.0)
    logits[0, 0, 1] = 2
    logits[0, 1, 2] = 3
    logits[0, 2, 1] = 1
    onnx.save(model([1, 3, 64, 64], [("boxes", codes), ("scores", logits), ("anchors", anchors)]), f"{out}/ssd.onnx")

    rows = np.zeros((1, 84, 7))
    rows[0, 26] = [0.5, 0.5, math.log(2), math.log(4), 0.9, 0.1, 0.8]
    rows[0, 82] = [0.5, 0.5, 0, 0, 0.7, 0.9, 0.2]
    onnx.save(model([1, 3, 64, 64], [("output", rows)]), f"{out}/yolox.onnx")
    onnx.save(model([1, 3, 64, 64], [("output", np.zeros((1, 10)))]), f"{out}/wrong.onnx")
    onnx.save(model([1, 1, 64, 64], [("output", rows)]), f"{out}/grey.onnx")
    onnx.save(model([1, 3, 4096, 4096], [("output", rows)]), f"{out}/huge.onnx")
    onnx.save(model([1, 3, 64, 64], [("boxes", codes), ("scores", logits), ("anchors", anchors)], int_outputs=("scores",)),
              f"{out}/ints.onnx")
    print("READY")


if __name__ == "__main__":
    main()
