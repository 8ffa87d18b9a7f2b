#!/usr/bin/python3
"""PyTorch peer for attngen-bench's ragged cases: the sequences padded to one batch of the longest,
attention under a boolean mask that is causal within each sequence (aligned as attngen aligns it)
and hides the padded keys. GQA grouped as (KVH, G*L, D) per sequence without copying K/V, as
peer_pytorch.py does. torch.nn.functional.scaled_dot_product_attention where the torch has it (2.0
and later); PyTorch 1.13 has not, and runs its math: matmul, scale, masked_fill, softmax, matmul.
Prints the median seconds of one call over the whole padded batch.

Usage: peer_pytorch_padded.py THREADS H KVH D DV DTYPE(f32|bf16) CAUSAL(none|top_left|bottom_right)
                              QUERY_LENGTHS KEY_LENGTHS     (comma-separated, one per sequence)
Exit code 3 when torch is not importable (reported as a missing peer).
"""
import math
import sys

from peer_common import median_seconds, require_torch

torch = require_torch()


def keep_mask(LQ, LK, G, q_len, k_len, causal):
    """(G*LQ, LK) boolean: which keys row g*LQ + i of a padded sequence of q_len queries and k_len
    keys sees. Padded rows see keys too, so that no row's softmax is empty."""
    i = torch.arange(G * LQ).remainder(LQ).unsqueeze(1)
    j = torch.arange(LK).unsqueeze(0)
    keep = j < k_len
    if causal != "none":
        offset = k_len - q_len if causal == "bottom_right" else 0
        keep = keep & (j <= i + offset)
    return keep


def main():
    threads, H, KVH, D, DV, dtype, causal, q_lengths, k_lengths = sys.argv[1:]
    threads, H, KVH, D, DV = map(int, (threads, H, KVH, D, DV))
    q_lengths = [int(n) for n in q_lengths.split(",")]
    k_lengths = [int(n) for n in k_lengths.split(",")]
    torch.set_num_threads(threads)
    dt = torch.bfloat16 if dtype == "bf16" else torch.float32
    G = H // KVH
    LQ, LK = max(q_lengths), max(k_lengths)

    def rand(*shape):
        return (torch.rand(*shape) * 2 - 1).to(dt)

    # One padded sequence at a time: its score matrix alone is (KVH, G*LQ, LK).
    q = [rand(KVH, G * LQ, D) for _ in q_lengths]
    k = [rand(KVH, LK, D) for _ in q_lengths]
    v = [rand(KVH, LK, DV) for _ in q_lengths]
    keep = [keep_mask(LQ, LK, G, lq, lk, causal) for lq, lk in zip(q_lengths, k_lengths)]
    hidden = [~mask for mask in keep]
    scale = 1.0 / math.sqrt(D)
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)

    def attend(b):
        if sdpa is not None:
            return sdpa(q[b], k[b], v[b], attn_mask=keep[b])
        scores = torch.matmul(q[b], k[b].transpose(1, 2)).mul_(scale)
        scores.masked_fill_(hidden[b], -math.inf)
        return torch.matmul(torch.softmax(scores, dim=-1), v[b])

    def call():
        for b in range(len(q_lengths)):
            attend(b)

    with torch.inference_mode():
        print(median_seconds(lambda n: call()))


if __name__ == "__main__":
    main()
