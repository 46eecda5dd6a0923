#!/usr/bin/python3
"""Writes tests/nn/layers/testdata/rnn_torch.json: GRU (Keras reset_after=True,
the form TF.js cannot build) and LSTM sequences computed by PyTorch's nn.GRU and
nn.LSTM (Debian's python3-torch) with Keras-layout weights mapped across, for
recurrent_test.cc to hold edl to. Keras' GRU kernel [F, 3U] orders its gates
z, r, h and PyTorch's weight_ih_l0 [3U, F] r, z, n; Keras' bias [2, 3U] is
PyTorch's bias_ih (row 0) and bias_hh (row 1). Keras' LSTM gates i, f, c, o are
PyTorch's i, f, g, o; its one bias is bias_ih (bias_hh zero).

Usage: tests/nn/layers/rnn_torch.py > tests/nn/layers/testdata/rnn_torch.json
"""
import json

import torch

torch.manual_seed(7)


def as_json(t):
    return {"shape": list(t.shape), "data": t.flatten().tolist()}


def gru_case(n, t, f, u):
    kernel, recurrent = torch.randn(f, 3 * u) * 0.5, torch.randn(u, 3 * u) * 0.5
    bias = torch.randn(2, 3 * u) * 0.5
    rnn = torch.nn.GRU(f, u, batch_first=True)

    def reorder(w):  # Keras columns z, r, h -> PyTorch rows r, z, n
        z, r, h = w[:, :u], w[:, u:2 * u], w[:, 2 * u:]
        return torch.cat([r, z, h], dim=1).T

    with torch.no_grad():
        rnn.weight_ih_l0.copy_(reorder(kernel))
        rnn.weight_hh_l0.copy_(reorder(recurrent))
        rnn.bias_ih_l0.copy_(reorder(bias[0:1]).flatten())
        rnn.bias_hh_l0.copy_(reorder(bias[1:2]).flatten())
        x = torch.randn(n, t, f)
        y, h = rnn(x)
    return {"class_name": "GRU", "config": {"units": u, "reset_after": True,
                                            "return_sequences": True, "return_state": True},
            "x": as_json(x), "weights": [as_json(kernel), as_json(recurrent), as_json(bias)],
            "outputs": [as_json(y), as_json(h[0])]}


def lstm_case(n, t, f, u):
    kernel, recurrent = torch.randn(f, 4 * u) * 0.5, torch.randn(u, 4 * u) * 0.5
    bias = torch.randn(4 * u) * 0.5
    rnn = torch.nn.LSTM(f, u, batch_first=True)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(kernel.T)
        rnn.weight_hh_l0.copy_(recurrent.T)
        rnn.bias_ih_l0.copy_(bias)
        rnn.bias_hh_l0.zero_()
        x = torch.randn(n, t, f)
        y, (h, c) = rnn(x)
    return {"class_name": "LSTM", "config": {"units": u, "return_sequences": True,
                                             "return_state": True},
            "x": as_json(x), "weights": [as_json(kernel), as_json(recurrent), as_json(bias)],
            "outputs": [as_json(y), as_json(h[0]), as_json(c[0])]}


print(json.dumps({"torch": torch.__version__,
                  "cases": [gru_case(3, 6, 4, 5), lstm_case(2, 7, 3, 4)]}))
