#!/usr/bin/python3
"""PyTorch side of scripts/bench/bench_zoo.sh: trains the same Fashion-MNIST
MLP / CNN as edl's zoo, the way `edl train --distribution_strategy=Local`
does, and prints one JSON line with what it ran and measured.

Usage: torch_zoo.py {mlp,cnn} STEPS THREADS DATA_DIR [--data {uint8,float32}]

Training mirrors edl's local loop step for step: batch 64; epochs of
ceil(N/64) batches over a fresh permutation (the last batch of an epoch holds
the N % 64 records left, as edl's does); per step: gather the batch, decode
it to float32 * 1/255 (--data=uint8), forward, cross-entropy, loss.item(),
backward, Adam (eps 1e-7, the zoo's cosine-decayed learning rate), accuracy
metric. Exactly STEPS steps run, all of them timed, the first included (no
untimed warm-up: edl's `final:` figure has none either); the timed span
starts before the first step and ends after the last, leaving out start-up,
data loading and model construction, as edl's does.

Inference: the 60,000 training images in batches of 256 (decode, forward,
loss, accuracy under no_grad), timed as a whole, as `edl evaluate`.

Data: --data=uint8 (default) holds the images as a uint8 tensor of the IDX
payload (N*784 bytes) and the labels as uint8, decoded per batch, which is
how edl holds them (data/idx_source.h). --data=float32 holds the images
pre-decoded as float32 (N*784*4 bytes) and labels as int64 (this script's
behaviour before; kept to compare with old figures).

Memory: peak_rss_mib is ru_maxrss read right after training (start-up, data,
training: the span of edl's `edl train` process, which bench_zoo.sh measures
the same way); import_rss_mib is the resident size after `import torch`
(the runtime alone); data_mib what the data held in memory takes.
"""
import argparse
import gzip
import json
import math
import resource
import struct
import time

import numpy as np
import torch
import torch.nn as nn


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


IMPORT_RSS_MIB = rss_mib()

# The zoo models' Adam schedules (nn/keras/zoo.cc): CosineDecay from 1e-3 to
# a tenth over decay_steps, then constant.
DECAY_STEPS = {"mlp": 1876, "cnn": 2814}


def learning_rate(step, decay_steps, initial=1e-3, alpha=0.1):
    t = min(step, decay_steps) / decay_steps
    return initial * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * t)) + alpha)


def read_idx(path):
    """An IDX uint8 file as a numpy array, inflated straight into it (no
    second copy of the payload)."""
    with gzip.open(path, "rb") as f:
        head = f.read(4)
        assert head[:3] == b"\0\0\x08", path + ": not a uint8 IDX file"
        dims = struct.unpack(">%dI" % head[3], f.read(4 * head[3]))
        out = np.empty(int(np.prod(dims)), np.uint8)
        at = 0
        while at < out.size:
            chunk = f.read(min(1 << 20, out.size - at))
            assert chunk, path + ": truncated"
            out[at:at + len(chunk)] = np.frombuffer(chunk, np.uint8)
            at += len(chunk)
    return out.reshape(dims)


def load(data_dir, split, layout):
    x = torch.from_numpy(read_idx(f"{data_dir}/{split}-images-idx3-ubyte.gz"))
    y = torch.from_numpy(read_idx(f"{data_dir}/{split}-labels-idx1-ubyte.gz"))
    if layout == "float32":
        x = x.to(torch.float32).mul_(1 / 255)
        y = y.to(torch.int64)
    return x, y


def decode(x, y):
    """A batch as the model takes it: float32 images scaled by 1/255 and
    int64 labels (what edl's IdxSource::Gather does per batch)."""
    if x.dtype == torch.uint8:
        x = x.to(torch.float32).mul_(1 / 255)
    return x, y.to(torch.int64)


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
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["mlp", "cnn"])
    ap.add_argument("steps", type=int)
    ap.add_argument("threads", type=int)
    ap.add_argument("data_dir")
    ap.add_argument("--data", choices=["uint8", "float32"], default="uint8")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x, y = load(a.data_dir, "train", a.data)
    data_mib = (x.numel() * x.element_size() + y.numel() * y.element_size()) / 2**20
    n = x.shape[0]
    model = mlp() if a.model == "mlp" else cnn()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    batch = 64
    steps_per_epoch = (n + batch - 1) // batch
    decay_steps = DECAY_STEPS[a.model]
    model.train()

    steps = samples = correct = 0
    t0 = time.perf_counter()
    epoch = 0
    while steps < a.steps:
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(epoch))
        for b in range(steps_per_epoch):
            if steps == a.steps:
                break
            idx = perm[b * batch:(b + 1) * batch]
            xb, yb = decode(x[idx], y[idx])
            for g in opt.param_groups:
                g["lr"] = learning_rate(steps, decay_steps)
            out = model(xb)
            loss = loss_fn(out, yb)
            if not math.isfinite(loss.item()):
                raise SystemExit("training diverged")
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            correct += (out.detach().argmax(1) == yb).sum().item()
            steps += 1
            samples += yb.numel()
        epoch += 1
    train_s = time.perf_counter() - t0
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    model.eval()
    infer_records = 0
    t0 = time.perf_counter()
    loss_sum = 0.0
    infer_correct = 0
    with torch.no_grad():
        for i in range(0, n, 256):
            xb, yb = decode(x[i:i + 256], y[i:i + 256])
            out = model(xb)
            loss_sum += loss_fn(out, yb).item() * yb.numel()
            infer_correct += (out.argmax(1) == yb).sum().item()
            infer_records += yb.numel()
    infer_s = time.perf_counter() - t0
    print(json.dumps({
        "steps": steps,
        "samples": samples,
        "train_seconds": train_s,
        "train_samples_per_s": samples / train_s,
        "train_accuracy": correct / samples,
        "infer_records": infer_records,
        "infer_samples_per_s": infer_records / infer_s,
        "infer_accuracy": infer_correct / infer_records,
        "peak_rss_mib": peak_rss_mib,
        "import_rss_mib": IMPORT_RSS_MIB,
        "data": a.data,
        "data_mib": data_mib,
        "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
