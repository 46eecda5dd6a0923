#!/usr/bin/python3
"""Writes Fashion-MNIST (Debian's dataset-fashion-mnist) as image files in
class folders, with PIL (Debian's python3-pil), not edl: the reference data
for edl's image-folder input (docs/images.md).

  scripts/fashion_mnist_images.py OUT [--format png|jpg] [--count N]
      [--size S] [--rgb] [--quality Q]

writes OUT/train/<class>/<index>.<format> (60,000 files) and
OUT/test/<class>/<index>.<format> (10,000), class folders named after the
Fashion-MNIST classes (sorted, they are not in label order; the file name is
the record's index in its IDX file). --count N writes only the first N
records of each split; --size S resizes each 28 x 28 image to S x S (PIL's
bicubic), --rgb saves RGB instead of gray; --quality sets the JPEG quality
(default 95). Files already there are kept (a rerun completes a partial
folder); the folder gets a file DONE when complete.
"""
import argparse
import gzip
import multiprocessing
import os
import struct

from PIL import Image

DATA = "/usr/share/datasets/fashion-mnist"
CLASSES = ["t-shirt_top", "trouser", "pullover", "dress", "coat", "sandal", "shirt",
           "sneaker", "bag", "ankle_boot"]


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def write_part(job):
    out, split, begin, end, args = job
    dims, pixels = read_idx(f"{DATA}/{split}-images-idx3-ubyte.gz" if split == "train"
                            else f"{DATA}/t10k-images-idx3-ubyte.gz")
    _, labels = read_idx(f"{DATA}/{split}-labels-idx1-ubyte.gz" if split == "train"
                         else f"{DATA}/t10k-labels-idx1-ubyte.gz")
    size = dims[1] * dims[2]
    for i in range(begin, end):
        path = f"{out}/{split}/{CLASSES[labels[i]]}/{i}.{args.format}"
        if os.path.exists(path):
            continue
        img = Image.frombytes("L", (dims[2], dims[1]), pixels[i * size:(i + 1) * size])
        if args.size:
            img = img.resize((args.size, args.size), Image.BICUBIC)
        if args.rgb:
            img = img.convert("RGB")
        tmp = f"{path}.tmp.{args.format}"
        img.save(tmp, **({"quality": args.quality} if args.format == "jpg" else {}))
        os.rename(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--format", choices=["png", "jpg"], default="png")
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--size", type=int, default=0)
    p.add_argument("--rgb", action="store_true")
    p.add_argument("--quality", type=int, default=95)
    args = p.parse_args()
    jobs = []
    for split, total in [("train", 60000), ("test", 10000)]:
        n = min(total, args.count) if args.count else total
        for c in CLASSES:
            os.makedirs(f"{args.out}/{split}/{c}", exist_ok=True)
        step = 2000
        jobs += [(args.out, split, b, min(n, b + step), args) for b in range(0, n, step)]
    with multiprocessing.Pool(os.cpu_count()) as pool:
        for k, _ in enumerate(pool.imap_unordered(write_part, jobs)):
            print(f"\rfashion_mnist_images: {k + 1}/{len(jobs)} parts", end="", flush=True)
    print()
    open(f"{args.out}/DONE", "w").close()


if __name__ == "__main__":
    main()
