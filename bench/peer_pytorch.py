#!/usr/bin/python3
"""PyTorch 1.13 peer for attngen-bench: matmul, scale, causal mask add, softmax, matmul, with GQA
grouped as (B, KVH, G*Lq, D) without copying K/V. Prints the median seconds of one call.

Usage: peer_pytorch.py THREADS B H KVH D DV LQ LK CAUSAL(0|1) DTYPE(f32|bf16|f16) ROTATED_CACHES
Exit code 3 when torch is not importable (reported as a missing peer).
"""
import math
import sys

from peer_common import median_seconds, require_torch

torch = require_torch()


def main():
    threads, B, H, KVH, D, DV, LQ, LK, causal, dtype, rotated = sys.argv[1:]
    threads, B, H, KVH, D, DV, LQ, LK, rotated = map(int, (threads, B, H, KVH, D, DV, LQ, LK, rotated))
    causal = causal == "1"
    torch.set_num_threads(threads)
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}.get(dtype, torch.float32)
    G = H // KVH
    groups = B * KVH
    # Score matrices of at most 1 GiB at a time (long_causal: one head group per step).
    chunk = max(1, (1 << 30) // (G * LQ * LK * 4))
    while groups % chunk:
        chunk -= 1
    chunks = groups // chunk

    def rand(*shape):
        return (torch.rand(*shape) * 2 - 1).to(dt)

    q = [rand(chunk, G * LQ, D) for _ in range(chunks)]
    k = [rand(chunk, LK, D) for _ in range(chunks * rotated)]
    v = [rand(chunk, LK, DV) for _ in range(chunks * rotated)]
    mask = None
    if causal:
        rows = torch.arange(G * LQ).remainder(LQ).unsqueeze(1)
        mask = torch.zeros(G * LQ, LK).masked_fill(torch.arange(LK).unsqueeze(0) > rows + (LK - LQ), -math.inf)
        mask = mask.to(dt)
    scale = 1.0 / math.sqrt(D)

    def call(n):
        cache = n % rotated
        for c in range(chunks):
            kv = cache * chunks + c
            scores = torch.matmul(q[c], k[kv].transpose(1, 2)).mul_(scale)
            if mask is not None:
                scores.add_(mask)
            torch.matmul(torch.softmax(scores, dim=-1), v[kv])

    with torch.inference_mode():
        print(median_seconds(call))


if __name__ == "__main__":
    main()
