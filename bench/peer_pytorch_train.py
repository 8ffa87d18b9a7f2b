#!/usr/bin/python3
"""PyTorch 1.13 peer for attngen-bench's training cases: the forward of peer_pytorch.py (matmul, scale,
causal mask add, softmax, matmul; GQA grouped as (B, KVH, G*Lq, D) without copying K/V) and its backward
through autograd, float32. Prints the median seconds of one forward + backward and of the backward
alone, then the process's peak resident MiB, on one line.

Usage: peer_pytorch_train.py THREADS B H KVH D DV LQ LK CAUSAL(0|1)
Exit code 3 when torch is not importable (reported as a missing peer).
"""
import math
import resource
import statistics
import sys
import time

from peer_common import require_torch

torch = require_torch()


def main():
    threads, B, H, KVH, D, DV, LQ, LK, causal = map(int, sys.argv[1:])
    torch.set_num_threads(threads)
    G = H // KVH

    def rand(*shape):
        return (torch.rand(*shape) * 2 - 1).requires_grad_()

    q = rand(B * KVH, G * LQ, D)
    k = rand(B * KVH, LK, D)
    v = rand(B * KVH, LK, DV)
    d_out = torch.rand(B * KVH, G * LQ, DV) * 2 - 1
    mask = None
    if causal:
        rows = torch.arange(G * LQ).remainder(LQ).unsqueeze(1)
        mask = torch.zeros(G * LQ, LK).masked_fill(torch.arange(LK).unsqueeze(0) > rows + (LK - LQ), -math.inf)
    scale = 1.0 / math.sqrt(D)

    def step():
        for t in (q, k, v):
            t.grad = None
        start = time.perf_counter()
        scores = torch.matmul(q, k.transpose(1, 2)).mul(scale)
        if mask is not None:
            scores = scores.add(mask)
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        middle = time.perf_counter()
        out.backward(d_out)
        end = time.perf_counter()
        return end - start, end - middle

    step()
    both, backward = [], []
    while len(both) < 100 and (len(both) < 3 or sum(both) < 1.0):
        total, back = step()
        both.append(total)
        backward.append(back)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(statistics.median(both), statistics.median(backward), peak_mib)


if __name__ == "__main__":
    main()
