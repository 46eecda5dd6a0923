#!/usr/bin/python3
"""Writes a CIFAR-10-shaped synthetic data set as IDX files for
scripts/bench/gpu_bench.sh: N random uint8 images [N, 32, 32, 3] in
DIR/synthetic-cifar-images-idx3-ubyte and N labels in 0..9 in
DIR/synthetic-cifar-labels-idx1-ubyte (edl finds the labels by that name).
Seeded, so every run writes the same bytes. Only for throughput: there is
nothing to learn in it.

Usage: make_synthetic_cifar.py DIR [N=10000]
"""
import os
import random
import struct
import sys


def write_idx(path, dims, data):
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, 0x08, len(dims)))  # uint8, rank
        for d in dims:
            f.write(struct.pack(">I", d))
        f.write(data)
    os.replace(path + ".tmp", path)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 10000
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    write_idx(os.path.join(out, "synthetic-cifar-images-idx3-ubyte"), [n, 32, 32, 3],
              rng.randbytes(n * 32 * 32 * 3))
    write_idx(os.path.join(out, "synthetic-cifar-labels-idx1-ubyte"), [n],
              bytes(rng.randrange(10) for _ in range(n)))


if __name__ == "__main__":
    main()
