#!/usr/bin/python3
"""PyTorch side of scripts/bench/bench_zoo.sh: trains the same Fashion-MNIST
MLP / CNN as edl's zoo (batch 64, Adam 1e-3, N threads) and prints one JSON
line with training and inference throughput and peak memory.

Usage: torch_zoo.py {mlp,cnn} STEPS THREADS DATA_DIR
"""
import gzip
import json
import resource
import sys
import time

import numpy as np
import torch
import torch.nn as nn


def load(data_dir, split):
    with gzip.open(f"{data_dir}/{split}-images-idx3-ubyte.gz", "rb") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(f"{data_dir}/{split}-labels-idx1-ubyte.gz", "rb") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    return torch.from_numpy(x.astype(np.float32) / 255.0), torch.from_numpy(y.astype(np.int64))


def mlp():
    # zoo:fashion_mnist_mlp: Flatten -> Dense(128, relu) -> Dense(10)
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn():
    # zoo:fashion_mnist_cnn (ElasticDL's MNIST functional model), NCHW here.
    return nn.Sequential(
        nn.Unflatten(1, (1, 28)),
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.BatchNorm2d(64, eps=1e-3, momentum=0.01),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(64 * 12 * 12, 10))


def main():
    which, steps, threads, data_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x, y = load(data_dir, "train")
    model = mlp() if which == "mlp" else cnn()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    batch = 64
    perm = torch.randperm(x.shape[0])
    model.train()

    def step(i):
        idx = perm[(i * batch) % (x.shape[0] - batch):][:batch]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        return loss

    for i in range(min(20, steps)):  # warm-up, not timed
        step(i)
    t0 = time.perf_counter()
    for i in range(steps):
        step(i)
    train_s = time.perf_counter() - t0

    model.eval()
    t0 = time.perf_counter()
    # Inference over the 60,000 training images (as edl's side does), so that
    # one-time start-up costs do not decide the figure.
    correct = 0
    with torch.no_grad():
        for i in range(0, x.shape[0], 256):
            correct += (model(x[i:i + 256]).argmax(1) == y[i:i + 256]).sum().item()
    infer_s = time.perf_counter() - t0
    print(json.dumps({
        "train_samples_per_s": steps * batch / train_s,
        "infer_samples_per_s": x.shape[0] / infer_s,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "torch": torch.__version__,
        "blas": torch.__config__.show().count("BLAS"),
    }))


if __name__ == "__main__":
    main()
