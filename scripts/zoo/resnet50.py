#!/usr/bin/env python3
"""Writes zoo:cifar10_resnet50's Keras model JSON (nn/keras/zoo_resnet50.h holds
its output): ResNet-50's layout (bottleneck blocks 1x1 reduce, 3x3, 1x1 expand x4,
BatchNormalization, ReLU, projection shortcuts where the shape changes; stages of
3, 4, 6 and 3 blocks; 50 weighted layers) for CIFAR-sized [32, 32, 3] images: a
3x3 stride-1 stem, no max pooling, stage widths WIDTH x (1, 2, 4, 8) (16: a
quarter of ImageNet's 64), stride 2 entering stages 2-4; global average
pooling, Dense(10) logits. BatchNormalization momentum 0.9 so that short runs
evaluate with settled moving statistics.

Usage: scripts/zoo/resnet50.py [WIDTH=16] > model.json
"""
import sys

from keras_graph import Graph

WIDTH = int(sys.argv[1]) if len(sys.argv) > 1 else 16
g = Graph()
BN = {"epsilon": 1.001e-5, "momentum": 0.9}


def conv_bn(x, name, filters, kernel, stride=1, relu=True):
    return g.conv_bn(x, name, filters, kernel, stride, {} if relu else None, BN)


g.add("InputLayer", "image", {"batch_input_shape": [None, 32, 32, 3], "dtype": "float32"}, [])
x = conv_bn("image", "stem", WIDTH, 3)
channels = WIDTH
for stage, blocks in enumerate([3, 4, 6, 3]):
    width = WIDTH * 2 ** stage
    for b in range(blocks):
        p = "s%db%d" % (stage + 1, b + 1)
        stride = 2 if stage > 0 and b == 0 else 1
        y = conv_bn(x, p + "_reduce", width, 1, stride)
        y = conv_bn(y, p + "_conv", width, 3)
        y = conv_bn(y, p + "_expand", 4 * width, 1, relu=False)
        shortcut = x
        if stride != 1 or channels != 4 * width:
            shortcut = conv_bn(x, p + "_proj", 4 * width, 1, stride, relu=False)
        y = g.add("Add", p + "_add", {}, [y, shortcut])
        x = g.add("ReLU", p + "_out", {}, [y])
        channels = 4 * width
x = g.add("GlobalAveragePooling2D", "pool", {}, [x])
x = g.add("Dense", "logits", {"units": 10}, [x])

print(g.spec("cifar10_resnet50", x, {"class_name": "Adam", "config": {"learning_rate": 0.002}}))
