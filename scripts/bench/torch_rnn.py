#!/usr/bin/env python3
"""PyTorch side of rnn_bench.sh: Embedding(VOCAB, 128) -> LSTM or GRU(256)
-> Linear(2), Adam, cross-entropy, batch 64, on the same CSV edl trains on
(100 token columns, then the label). Epochs over a fresh permutation each,
STEPS steps; prints one JSON line: steps, samples, train_samples_per_s.

On DEVICE=cuda, model and data live on GPU 0 (cuDNN's RNN, TF32 off).

Usage: torch_rnn.py CSV CELL(lstm|gru) STEPS THREADS VOCAB [DEVICE(cpu|cuda)]
"""
import json
import sys
import time

import numpy as np
import torch

path, cell, steps, threads, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
device = sys.argv[6] if len(sys.argv) > 6 else "cpu"
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_num_threads(threads)
torch.manual_seed(1)
data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
tokens = torch.from_numpy(data[:, :-1].copy()).to(device)
labels = torch.from_numpy(data[:, -1].copy()).to(device)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, 128)
        rnn = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
        self.rnn = rnn(128, 256, batch_first=True)
        self.out = torch.nn.Linear(256, 2)

    def forward(self, x):
        _, h = self.rnn(self.embed(x))
        h = h[0] if cell == "lstm" else h
        return self.out(h[-1])


model = Model().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
n, batch = tokens.shape[0], 64
done = samples = 0
start = time.perf_counter()
while done < steps:
    perm = torch.randperm(n, device=device)
    for i in range(0, n, batch):
        if done == steps:
            break
        idx = perm[i:i + batch]
        opt.zero_grad()
        loss = loss_fn(model(tokens[idx]), labels[idx])
        loss.item()
        loss.backward()
        opt.step()
        done += 1
        samples += len(idx)
elapsed = time.perf_counter() - start
print(json.dumps({"steps": done, "samples": samples, "train_samples_per_s": samples / elapsed}))
