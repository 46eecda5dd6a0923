#!/usr/bin/env python3
"""Writes zoo:mobilenet_v2's Keras model JSON (nn/keras/zoo.cc holds its output):
MobileNetV2 for CIFAR-sized [32, 32, 3] images, width multiplier ALPHA, as
keras.applications.MobileNetV2 builds it (inverted residual blocks: 1x1
expansion, 3x3 depthwise, 1x1 projection, BatchNormalization, ReLU6, residual
Add where shapes allow; BatchNormalization's momentum is 0.9, not 0.999, so
that the moving statistics evaluation uses settle within a short run) with the usual CIFAR changes: a stride-1 stem and
stride 1 in the second stage, so 32x32 inputs end at 4x4; "same" padding for
the stride-2 depthwise convolutions; Dense(10) logits.

Usage: scripts/zoo/mobilenet_v2.py [ALPHA=0.5] > model.json
"""
import sys

from keras_graph import Graph

ALPHA = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
# (expansion t, output channels c, repeats n, first stride s)
BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 1), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
          (6, 160, 3, 2), (6, 320, 1, 1)]


def divisible(v, d=8):
    new = max(d, int(v + d / 2) // d * d)
    return new + d if new < 0.9 * v else new


g = Graph()
BN = {"epsilon": 0.001, "momentum": 0.9}
RELU6 = {"max_value": 6.0}


def conv_bn(x, name, filters, kernel, stride=1, relu=True):
    return g.conv_bn(x, name, filters, kernel, stride, RELU6 if relu else None, BN)


g.add("InputLayer", "image", {"batch_input_shape": [None, 32, 32, 3], "dtype": "float32"}, [])
x = conv_bn("image", "stem", divisible(32 * ALPHA), 3)
channels = divisible(32 * ALPHA)
block = 0
for t, c, n, s in BLOCKS:
    out = divisible(c * ALPHA)
    for i in range(n):
        stride = s if i == 0 else 1
        p = "block%d" % block
        y = x
        if t != 1:
            y = conv_bn(y, p + "_expand", channels * t, 1)
        y = g.add("DepthwiseConv2D", p + "_depthwise",
                  {"kernel_size": [3, 3], "strides": [stride, stride], "padding": "same",
                   "use_bias": False}, [y])
        y = g.add("BatchNormalization", p + "_depthwise_bn", BN, [y])
        y = g.add("ReLU", p + "_depthwise_relu", RELU6, [y])
        y = conv_bn(y, p + "_project", out, 1, relu=False)
        if stride == 1 and channels == out:
            y = g.add("Add", p + "_add", {}, [x, y])
        x, channels = y, out
        block += 1
x = conv_bn(x, "head", 1280 if ALPHA <= 1.0 else divisible(1280 * ALPHA), 1)
x = g.add("GlobalAveragePooling2D", "pool", {}, [x])
x = g.add("Dense", "logits", {"units": 10}, [x])

print(g.spec("mobilenet_v2", x, {"class_name": "Adam", "config": {"learning_rate": 0.002}}))
