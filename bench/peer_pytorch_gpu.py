#!/usr/bin/env python3
"""PyTorch 2.x GPU peer for attngen-bench --device cuda: torch.nn.functional.scaled_dot_product_attention
on the same shapes, with the math backend (the case's dtype: CUDA cores, like attngen) and the flash
backend (tensor cores; f16 for f32 cases, the case's dtype otherwise). K/V heads are expanded to the
query heads before timing (for GQA), which the timed call therefore does not pay for.

Usage: peer_pytorch_gpu.py B H KVH D DV LQ LK CAUSAL(0|1) DTYPE(f32|bf16|f16) ROTATED_CACHES
Prints one JSON line: {"device", "math_seconds", "flash_seconds", "flash_dtype"}; a backend that
cannot run the shape has null seconds and its reason. Exit code 3 when torch or a CUDA device is missing.
"""
import json
import statistics
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("missing: torch is not importable by " + sys.executable)
    sys.exit(3)

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def backend(name):
    """A context manager that allows only one SDPA backend (PyTorch 2.0-2.2 and 2.3+ spell it differently)."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel({"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION}[name])
    except ImportError:
        return torch.backends.cuda.sdp_kernel(enable_math=name == "math", enable_flash=name == "flash",
                                              enable_mem_efficient=False)


def median_seconds(call):
    """Median of timed calls after a warm-up: at least 3 and about a second in all, as attngen-bench's."""
    call(0)
    torch.cuda.synchronize()
    seconds = []
    n = 1
    while n <= 100 and (len(seconds) < 3 or sum(seconds) < 1.0):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call(n)
        end.record()
        end.synchronize()
        seconds.append(start.elapsed_time(end) / 1e3)
        n += 1
    return statistics.median(seconds)


def time_backend(name, dtype, B, H, KVH, D, DV, LQ, LK, causal, rotated):
    def rand(*shape):
        return torch.rand(*shape, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dtype)

    q = rand(B, H, LQ, D)
    group = H // KVH
    k = [rand(B, KVH, LK, D).repeat_interleave(group, dim=1) for _ in range(rotated)]
    v = [rand(B, KVH, LK, DV).repeat_interleave(group, dim=1) for _ in range(rotated)]
    with torch.inference_mode(), backend(name):
        return median_seconds(lambda n: F.scaled_dot_product_attention(q, k[n % rotated], v[n % rotated],
                                                                        is_causal=causal))


def main():
    B, H, KVH, D, DV, LQ, LK, causal, dtype, rotated = sys.argv[1:]
    B, H, KVH, D, DV, LQ, LK, rotated = map(int, (B, H, KVH, D, DV, LQ, LK, rotated))
    causal = causal == "1"
    if not torch.cuda.is_available():
        print("missing: no CUDA device visible to torch " + torch.__version__)
        sys.exit(3)
    flash_dtype = "f16" if dtype == "f32" else dtype
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "flash_dtype": flash_dtype}
    for name, run_dtype in (("math", dtype), ("flash", flash_dtype)):
        try:
            report[name + "_seconds"] = time_backend(name, DTYPES[run_dtype], B, H, KVH, D, DV, LQ, LK, causal, rotated)
        except RuntimeError as error:  # e.g. flash without support for this head dim or GPU
            report[name + "_seconds"] = None
            report[name + "_error"] = str(error).splitlines()[0]
        torch.cuda.empty_cache()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
