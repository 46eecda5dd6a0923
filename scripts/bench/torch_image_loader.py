#!/usr/bin/python3
"""The peer of bench/image_decode_bench.cc (scripts/bench/image_bench.sh):
torchvision's ImageFolder and DataLoader turning the same JPEG files into
augmented float tensors: PIL decodes each file, Resize((SIZE, SIZE)),
RandomCrop(CROP), RandomHorizontalFlip(), ToTensor(), batches of 64,
THREADS loader worker processes (each with one torch thread).

  torch_image_loader.py DIR THREADS SIZE CROP
"""
import sys
import time

import torch
import torchvision
from torchvision import datasets, transforms


def main():
    d, threads, size, crop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    tf = transforms.Compose([transforms.Resize((size, size)), transforms.RandomCrop(crop),
                             transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    ds = datasets.ImageFolder(d, transform=tf)
    loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=False, num_workers=threads,
                                         worker_init_fn=lambda _: torch.set_num_threads(1))
    start = time.time()
    n = 0
    for x, _ in loader:
        n += x.shape[0]
    s = time.time() - start
    print(f"torch: {n} images in {s:.2f} s: {n / s:.0f} images/s, {n / s / threads:.0f} per "
          f"thread (torchvision {torchvision.__version__}, PIL)")


if __name__ == "__main__":
    main()
