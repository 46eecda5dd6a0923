#!/usr/bin/python3
"""Writes a CIFAR-10-shaped synthetic data set as IDX files: N uint8 images
[N, 32, 32, 3] in DIR/synthetic-cifar-images-idx3-ubyte and N labels in 0..9
in DIR/synthetic-cifar-labels-idx1-ubyte (edl finds the labels by that name).
Seeded, so every run writes the same bytes.

By default the images and labels are independent random bytes: only for
throughput (scripts/bench/gpu_bench.sh), there is nothing to learn in it.

With --planted the set is learnable, for comparing accuracies across devices
(scripts/gpu_check.sh): each image is uniform noise, and label c brightens one
8x8 square of channel c % 3 at position c of a 4x4 grid by CONTRAST (default
48) grey levels, so a network must find a faint square in the noise. The
first N images use seed 7; --test writes a held-out set (seed 8) named
synthetic-cifar-test-*.

Usage: make_synthetic_cifar.py DIR [N=10000] [--planted [--contrast=C] [--test]]
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


def planted(rng, n, contrast):
    images = bytearray(rng.randbytes(n * 32 * 32 * 3))
    labels = bytearray(n)
    for i in range(n):
        c = rng.randrange(10)
        labels[i] = c
        y0, x0 = (c // 4) * 8, (c % 4) * 8
        for y in range(y0, y0 + 8):
            row = ((i * 32 + y) * 32) * 3
            for x in range(x0, x0 + 8):
                at = row + x * 3 + c % 3
                images[at] = min(255, images[at] * (255 - contrast) // 255 + contrast)
    return bytes(images), bytes(labels)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    known = ("--planted", "--test", "--contrast=")
    if len(args) not in (1, 2) or any(not f.startswith(known) for f in flags):
        sys.exit(__doc__)
    out, n = args[0], int(args[1]) if len(args) == 2 else 10000
    os.makedirs(out, exist_ok=True)
    test = "--test" in flags
    rng = random.Random(8 if test else 7)
    name = "synthetic-cifar-test" if test else "synthetic-cifar"
    if "--planted" in flags:
        contrast = next((int(f.split("=")[1]) for f in flags if f.startswith("--contrast=")), 48)
        images, labels = planted(rng, n, contrast)
    else:
        images = rng.randbytes(n * 32 * 32 * 3)
        labels = bytes(rng.randrange(10) for _ in range(n))
    write_idx(os.path.join(out, name + "-images-idx3-ubyte"), [n, 32, 32, 3], images)
    write_idx(os.path.join(out, name + "-labels-idx1-ubyte"), [n], labels)


if __name__ == "__main__":
    main()
