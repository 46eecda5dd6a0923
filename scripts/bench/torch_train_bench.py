#!/usr/bin/python3
"""PyTorch side of scripts/bench/gpu_bench.sh: trains the same model as edl's
zoo entry (fashion_mnist_cnn with Adam, cifar10_resnet with SGD momentum, or
mobilenet_v2 with Adam)
on the same IDX data, on DEVICE (cpu or cuda), and prints one JSON line with
the training throughput. Timing covers STEPS steps after 10 warm-up steps,
with the device synchronized at both ends (the batches are on the device
beforehand, as edl's input pipeline overlaps nothing either way).

Usage: torch_train_bench.py {cnn,resnet,mobilenet} STEPS BATCH DEVICE THREADS IMAGES_IDX
"""
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

from torch_zoo import cnn  # zoo:fashion_mnist_cnn, the same model as bench_zoo.sh


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * rank).reshape(dims)


class Block(nn.Module):
    # zoo:cifar10_resnet's basic block: conv-BN-ReLU-conv-BN + shortcut, ReLU.
    def __init__(self, cin, cout, stride, project):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                               nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01), nn.ReLU(),
                               nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                               nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01))
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                    nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01))
                      if project else nn.Identity())

    def forward(self, x):
        return torch.relu(self.a(x) + self.short(x))


def resnet():
    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16, eps=1e-3, momentum=0.01),
              nn.ReLU()]
    cin = 16
    for s, (cout, stride) in enumerate([(16, 1), (32, 2), (64, 2)]):
        for b in range(2):
            st = stride if b == 0 else 1
            layers.append(Block(cin, cout, st, project=(st != 1 or (s > 0 and b == 0))))
            cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


def divisible(v, d=8):
    new = max(d, int(v + d / 2) // d * d)
    return new + d if new < 0.9 * v else new


def conv_bn(cin, cout, kernel, stride=1, groups=1, relu=True):
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout, eps=1e-3, momentum=0.1)]
    return layers + [nn.ReLU6()] if relu else layers


class Inverted(nn.Module):
    # zoo:mobilenet_v2's block: 1x1 expansion, 3x3 depthwise, 1x1 projection.
    def __init__(self, cin, cout, t, stride):
        super().__init__()
        mid = cin * t
        layers = conv_bn(cin, mid, 1) if t != 1 else []
        layers += conv_bn(mid, mid, 3, stride, groups=mid) + conv_bn(mid, cout, 1, relu=False)
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


def mobilenet(alpha=0.5):
    # scripts/zoo/mobilenet_v2.py's model (the stride-2 depthwise pads 1 on
    # every side here, "same" pads bottom/right only: the same work).
    cin = divisible(32 * alpha)
    layers = conv_bn(3, cin, 3)
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 1), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            cout = divisible(c * alpha)
            layers.append(Inverted(cin, cout, t, s if i == 0 else 1))
            cin = cout
    layers += conv_bn(cin, 1280, 1)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 10))


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    which, steps, batch, device, threads, images = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
    torch.set_num_threads(threads)
    # edl computes in plain fp32; so does PyTorch unless TORCH_TF32=1.
    tf32 = os.environ.get("TORCH_TF32", "0") == "1"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.manual_seed(0)
    labels = images.replace("images-idx3", "labels-idx1")
    x = torch.from_numpy(read_idx(images).astype(np.float32) / 255.0)
    y = torch.from_numpy(read_idx(labels).astype(np.int64))
    if which == "resnet":
        x = x.permute(0, 3, 1, 2).contiguous()  # NHWC file, NCHW model
        model = resnet()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    elif which == "mobilenet":
        x = x.permute(0, 3, 1, 2).contiguous()
        model = mobilenet()
        opt = torch.optim.Adam(model.parameters(), lr=2e-3, eps=1e-7)
    else:
        model = cnn()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    model.to(device).train()
    x, y = x.to(device), y.to(device)
    loss_fn = nn.CrossEntropyLoss()
    n = x.shape[0] - batch

    def step(i):
        lo = (i * batch) % n
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[lo:lo + batch]), y[lo:lo + batch])
        loss.backward()
        opt.step()

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for i in range(10):
        step(i)
    sync()
    t0 = time.perf_counter()
    for i in range(steps):
        step(i)
    sync()
    seconds = time.perf_counter() - t0
    print(json.dumps({"train_samples_per_s": steps * batch / seconds, "device": device,
                      "torch": torch.__version__,
                      "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else ""}))


if __name__ == "__main__":
    main()
