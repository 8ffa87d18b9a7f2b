"""A generated kernel called through its C API from Python's ctypes, on PyTorch tensors' memory,
as another language's FFI calls it: the structs of attngen/c_api.h declared here, field by field.

Usage: ffi_ctypes.py LIBRARY  (a shared library holding the aot_gqa_causal kernel and the runtime)
Checks the output against float64 attention computed by PyTorch, and that a wrong shape returns the
error code and message without writing the output. Exit code 0 when every check passes.
"""
import ctypes
import math
import sys

import torch

MAX_RANK, MAX_CAPTURED_TENSORS, MAX_CAPTURED_SCALARS, ERROR_MESSAGE_SIZE = 4, 4, 4, 512
F32, HOST = 0, 0
OK, WRONG_SHAPE = 0, 4


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK), ("strides", ctypes.c_int64 * MAX_RANK),
                ("device", ctypes.c_int32)]


class GpuOptions(ctypes.Structure):
    _fields_ = [("run_host_tensors_on", ctypes.c_int32), ("cuda_context", ctypes.c_void_p),
                ("cuda_stream", ctypes.c_void_p)]


class AttentionArgs(ctypes.Structure):
    _fields_ = [("q", Tensor), ("k", Tensor), ("v", Tensor), ("mask", Tensor), ("key_padding", Tensor),
                ("output", Tensor), ("lse", Tensor), ("captures", Tensor * MAX_CAPTURED_TENSORS),
                ("scalars", ctypes.c_float * MAX_CAPTURED_SCALARS), ("gpu", GpuOptions),
                ("q_offsets", Tensor), ("k_scale", Tensor), ("v_scale", Tensor), ("page_table", Tensor),
                ("kv_lengths", Tensor), ("sinks", Tensor), ("positions", Tensor)]


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("message", ctypes.c_char * ERROR_MESSAGE_SIZE)]


def view(tensor):
    """The attngen_tensor of a float32 PyTorch CPU tensor, with its own strides."""
    t = Tensor(data=tensor.data_ptr(), dtype=F32, rank=tensor.dim(), device=HOST)
    for d in range(tensor.dim()):
        t.shape[d], t.strides[d] = tensor.shape[d], tensor.stride(d)
    return t


def reference(q, k, v):
    """Top-left causal GQA attention in float64; tensors (B, L, heads, D)."""
    heads, kv_heads = q.shape[2], k.shape[2]
    q, k, v = (t.double().transpose(1, 2) for t in (q, k, v))
    k = k.repeat_interleave(heads // kv_heads, dim=1)
    v = v.repeat_interleave(heads // kv_heads, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    lq, lk = scores.shape[-2:]
    scores = scores.masked_fill(torch.ones(lq, lk, dtype=torch.bool).triu(1), float("-inf"))
    return (scores.softmax(-1) @ v).transpose(1, 2)


def main():
    library = ctypes.CDLL(sys.argv[1])
    run = library.aot_gqa_causal_run
    run.argtypes = [ctypes.POINTER(AttentionArgs), ctypes.POINTER(Error)]
    run.restype = ctypes.c_int32

    torch.manual_seed(3)
    batch, length = 2, 37
    q = torch.rand(batch, length, 32, 128) * 2 - 1
    k = torch.rand(batch, length, 8, 128) * 2 - 1
    # A transposed view: strides that are not the dense ones, as PyTorch apps pass them.
    v = (torch.rand(batch, 8, length, 128) * 2 - 1).transpose(1, 2)
    output = torch.zeros(batch, length, 32, 128)
    args = AttentionArgs(q=view(q), k=view(k), v=view(v), output=view(output))
    error = Error()
    failures = []

    code = run(ctypes.byref(args), ctypes.byref(error))
    if code != OK:
        failures.append(f"call failed with code {code}: {error.message.decode()}")
    worst = (output.double() - reference(q, k, v)).abs().max().item()
    print(f"max abs error against float64: {worst:.2e}")
    if not worst <= 1e-5:
        failures.append(f"output differs from the reference by {worst}")

    output.fill_(7.0)
    args.k.shape[2] = 4
    code = run(ctypes.byref(args), ctypes.byref(error))
    message = error.message.decode()
    print(f"wrong shape: code {code}, message: {message}")
    if code != WRONG_SHAPE or error.code != WRONG_SHAPE or not message.startswith("k: expected 8 kv heads"):
        failures.append(f"wrong shape gave code {code} and message `{message}`")
    if not bool((output == 7.0).all()):
        failures.append("a refused call wrote its output")

    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
