#!/usr/bin/python3
"""Writes tests/nn/layers/testdata/mha_torch.json: MultiHeadAttention cases
computed by PyTorch's nn.MultiheadAttention (Debian's python3-torch) with
Keras-layout weights mapped across, for attention_test.cc to hold edl to.
Keras' head h, dimension j is PyTorch's embedding index h * head_dim + j, so
with query features = heads * key_dim (PyTorch's embed_dim) and value_dim =
key_dim: q_proj_weight = query/kernel reshaped [Dq, H*kd], transposed (same
for key and value), in_proj_bias = the three biases flattened,
out_proj.weight = attention_output/kernel reshaped [H*vd, Dq], transposed.
A Keras mask (1 = may attend) is PyTorch's boolean attn_mask negated,
repeated per head.

Usage: tests/nn/layers/mha_torch.py > tests/nn/layers/testdata/mha_torch.json
"""
import json

import torch

torch.manual_seed(5)


def case(heads, key_dim, tq, tv, dk, dv, batch, masked, bias):
    e = heads * key_dim
    mha = torch.nn.MultiheadAttention(e, heads, bias=bias, kdim=dk, vdim=dv, batch_first=True)
    weights = {
        "query/kernel": torch.randn(e, heads, key_dim) * 0.5,
        "key/kernel": torch.randn(dk, heads, key_dim) * 0.5,
        "value/kernel": torch.randn(dv, heads, key_dim) * 0.5,
        "attention_output/kernel": torch.randn(heads, key_dim, e) * 0.5,
    }
    if bias:
        for n in ("query", "key", "value"):
            weights[n + "/bias"] = torch.randn(heads, key_dim) * 0.5
        weights["attention_output/bias"] = torch.randn(e) * 0.5
    with torch.no_grad():
        wq = weights["query/kernel"].reshape(e, e).T
        wk = weights["key/kernel"].reshape(dk, e).T
        wv = weights["value/kernel"].reshape(dv, e).T
        if mha.in_proj_weight is not None:  # PyTorch packs them when dk == dv == e
            mha.in_proj_weight.copy_(torch.cat([wq, wk, wv]))
        else:
            mha.q_proj_weight.copy_(wq)
            mha.k_proj_weight.copy_(wk)
            mha.v_proj_weight.copy_(wv)
        mha.out_proj.weight.copy_(weights["attention_output/kernel"].reshape(e, e).T)
        if bias:
            mha.in_proj_bias.copy_(torch.cat([weights[n + "/bias"].flatten()
                                              for n in ("query", "key", "value")]))
            mha.out_proj.bias.copy_(weights["attention_output/bias"])
    q = torch.randn(batch, tq, e)
    k = torch.randn(batch, tv, dk)
    v = torch.randn(batch, tv, dv)
    mask = None
    if masked:
        mask = (torch.rand(batch, tq, tv) > 0.4).float()
        mask[:, :, 0] = 1  # every query may attend somewhere
        attn_mask = (mask == 0).repeat_interleave(heads, dim=0)
    with torch.no_grad():
        out, _ = mha(q, k, v, attn_mask=attn_mask if masked else None, need_weights=False)
    inputs = [q, v, k] + ([mask] if masked else [])
    return {
        "config": {"num_heads": heads, "key_dim": key_dim, "use_bias": bias},
        "inputs": [{"shape": list(t.shape), "data": t.flatten().tolist()} for t in inputs],
        "weights": {n: {"shape": list(t.shape), "data": t.flatten().tolist()}
                    for n, t in weights.items()},
        "output": {"shape": list(out.shape), "data": out.flatten().tolist()},
    }


print(json.dumps({"torch": torch.__version__, "cases": [
    case(2, 3, 4, 5, 4, 7, 2, masked=False, bias=True),
    case(3, 2, 3, 6, 5, 4, 2, masked=True, bias=True),
    case(1, 4, 5, 5, 4, 4, 3, masked=True, bias=False),
]}))
