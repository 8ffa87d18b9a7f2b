#!/usr/bin/python3
"""PyTorch 1.13 peer for attngen-bench's module cases: nn.MultiheadAttention in eval mode under
inference_mode (its fast path where it takes it: self-attention, batch_first, need_weights off).
nn.MultiheadAttention has no kv heads: GQA cases run what a PyTorch user writes instead, F.linear
projections to kv_heads x head_dim, K and V repeated over each group, matmul, softmax, matmul,
F.linear. Prints the median seconds of one call.

Usage: peer_pytorch_module.py THREADS B L S E H KVH SELF(0|1) KEY_PADDING(0|1) WEIGHTS(0|1)
Exit code 3 when torch is not importable (reported as a missing peer).
"""
import math
import sys

from peer_common import median_seconds, require_torch

torch = require_torch()
import torch.nn.functional as F


def main():
    threads, B, L, S, E, H, KVH, self_attention, padded, weights = map(int, sys.argv[1:])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    query = torch.rand(B, L, E) * 2 - 1
    key = query if self_attention else torch.rand(B, S, E) * 2 - 1
    padding = None
    if padded:  # the last eighth of each sequence hidden, as attngen-bench's call
        padding = torch.arange(S).unsqueeze(0).expand(B, S) >= S * 7 // 8
    if KVH == H:
        module = torch.nn.MultiheadAttention(E, H, batch_first=True).eval()

        def call():
            module(query, key, key, key_padding_mask=padding, need_weights=bool(weights))
    else:
        hd, G = E // H, H // KVH
        wq, wo = torch.rand(E, E) / math.sqrt(E), torch.rand(E, E) / math.sqrt(E)
        wk, wv = torch.rand(KVH * hd, E) / math.sqrt(E), torch.rand(KVH * hd, E) / math.sqrt(E)
        bq, bk, bv, bo = torch.rand(E), torch.rand(KVH * hd), torch.rand(KVH * hd), torch.rand(E)
        mask = None
        if padding is not None:
            mask = torch.zeros(B, 1, 1, S).masked_fill(padding.view(B, 1, 1, S), -math.inf)

        def call():
            q = F.linear(query, wq, bq).view(B, L, H, hd).transpose(1, 2)
            k = F.linear(key, wk, bk).view(B, S, KVH, hd).transpose(1, 2).repeat_interleave(G, dim=1)
            v = F.linear(key, wv, bv).view(B, S, KVH, hd).transpose(1, 2).repeat_interleave(G, dim=1)
            scores = torch.matmul(q, k.transpose(-1, -2)).mul_(1.0 / math.sqrt(hd))
            if mask is not None:
                scores.add_(mask)
            out = torch.matmul(torch.softmax(scores, dim=-1), v)
            F.linear(out.transpose(1, 2).reshape(B, L, E), wo, bo)

    with torch.inference_mode():
        print(median_seconds(lambda n: call()))


if __name__ == "__main__":
    main()
