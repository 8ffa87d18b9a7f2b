"""Gradients of attngen's attention operator by PyTorch's autograd, in float64: the oracle of the C++
float64 reference backward (reference_backward.cpp).

Usage: pytorch_gradients.py CASE_DIR...

Each CASE_DIR holds description.txt (the description's text form, attngen/text_format.hpp),
sizes.txt ("B Lq Lk") and float64 row-major tensors q.bin, k.bin, v.bin, d_output.bin and, where the
description has them, mask.bin, key_padding.bin, sinks.bin, capture_N.bin, scalars.bin. This writes
dq.bin, dk.bin, dv.bin and, where they have gradients, d_sinks.bin, d_capture_N.bin (float tensors
the score modifier reads) and d_scalars.bin.

The score and mask modifiers are evaluated from their text form by the small interpreter below, on
torch tensors broadcast over (B, H, Lq, Lk), so autograd differentiates whatever a modifier computes.
Semantics as attngen/modifiers.hpp states them: integer division and remainder round down (x / 0 is
0, x % 0 is x), shift counts clamp into 0..31 on 32-bit values, a score at or below -1e38 is masked,
a fully masked row has no gradient.
"""
import math
import re
import sys

import numpy as np
import torch

MASKED = -1e38
TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*|[$@][A-Za-z_][A-Za-z_0-9]*|-?inff|-?[0-9.]+(?:e[-+]?[0-9]+)?f?|[(),])")


def tokens(text):
    at, out = 0, []
    while at < len(text):
        m = TOKEN.match(text, at)
        if not m:
            if text[at:].strip() == "":
                break
            raise ValueError(f"cannot read modifier text at {text[at:]!r}")
        out.append(m.group(1))
        at = m.end()
    return out


def wrap32(x):
    return ((x + 2**31) % 2**32) - 2**31


class Modifier:
    """A modifier's prefix text form evaluated on tensors."""

    def __init__(self, text, leaves, tensors, scalars):
        self.tokens, self.at = tokens(text), 0
        self.leaves, self.tensors, self.scalars = leaves, tensors, scalars

    def value(self):
        result = self.node()
        if self.at != len(self.tokens):
            raise ValueError("trailing text in a modifier")
        return result

    def take(self):
        self.at += 1
        return self.tokens[self.at - 1]

    def operands(self):
        assert self.take() == "("
        values = [self.node()]
        while self.take() == ",":
            values.append(self.node())
        return values

    def node(self):
        word = self.take()
        if word in ("true", "false"):
            return torch.tensor(word == "true")
        if word.endswith("inff"):
            return torch.tensor(-math.inf if word.startswith("-") else math.inf, dtype=torch.float64)
        if word[0].isdigit() or word[0] in "-.":
            return torch.tensor(float(word[:-1]), dtype=torch.float64) if word.endswith("f") else torch.tensor(int(word))
        if word[0] == "$":
            return self.scalars[word[1:]]
        if word[0] == "@":
            table = self.tensors[word[1:]]
            indices = [torch.clamp(i, 0, n - 1) for i, n in zip(self.operands(), table.shape)]
            return table[tuple(indices)]
        if word in self.leaves:
            return self.leaves[word]
        return self.apply(word, self.operands())

    @staticmethod
    def apply(op, x):
        integer = all(not t.is_floating_point() and t.dtype != torch.bool for t in x)
        a = x[0]
        b = x[1] if len(x) > 1 else None
        if op in ("div", "mod") and integer:
            safe = torch.where(b == 0, torch.ones_like(b), b)
            quotient = torch.where(b == 0, torch.zeros_like(a * b), torch.div(a, safe, rounding_mode="floor"))
            return quotient if op == "div" else a - b * quotient
        float_math = {"exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "sqrt": torch.sqrt, "sin": torch.sin,
                      "cos": torch.cos, "tan": torch.tan, "asin": torch.asin, "acos": torch.acos, "atan": torch.atan,
                      "sinh": torch.sinh, "cosh": torch.cosh, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                      "erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil, "round": torch.round}
        if op in float_math:
            return float_math[op](a)
        shift = lambda n: torch.clamp(n, 0, 31)
        table = {
            "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "div": lambda: a / b, "mod": lambda: torch.remainder(a, b), "neg": lambda: -a,
            "min": lambda: torch.minimum(a, b), "max": lambda: torch.maximum(a, b), "abs": lambda: torch.abs(a),
            "pow": lambda: torch.pow(a, b), "atan2": lambda: torch.atan2(a, b), "to_float": lambda: a.double(),
            "bit_and": lambda: a & b, "bit_or": lambda: a | b, "bit_xor": lambda: a ^ b, "bit_not": lambda: ~a,
            "shl": lambda: wrap32(a << shift(b)), "shr": lambda: a >> shift(b),
            "lt": lambda: a < b, "le": lambda: a <= b, "gt": lambda: a > b, "ge": lambda: a >= b,
            "eq": lambda: a == b, "ne": lambda: a != b, "and": lambda: a & b, "or": lambda: a | b,
            "not": lambda: ~a, "select": lambda: torch.where(a, b, x[2]),
        }
        if op not in table:
            raise ValueError(f"unknown modifier node {op}")
        return table[op]()


def read(directory, name, shape):
    return torch.from_numpy(np.fromfile(f"{directory}/{name}.bin", dtype="<f8").reshape(shape))


def run_case(directory):
    config, tensor_lines, scalar_names = {}, [], []
    with open(f"{directory}/description.txt") as f:
        for line in f:
            key, _, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if key == "tensor":
                tensor_lines.append(value.split())
            elif key == "scalar":
                scalar_names.append(value)
            elif key:
                config[key] = value
    B, Lq, Lk = (int(w) for w in open(f"{directory}/sizes.txt").read().split())
    H, KVH, D = int(config["heads"]), int(config["kv_heads"]), int(config["head_dim"])
    Dv, group = int(config["v_head_dim"]), int(config["heads"]) // int(config["kv_heads"])
    scale = 1.0 / math.sqrt(D) if config["scale"] == "default" else float(config["scale"])
    extent = {"batch": B, "heads": H, "query_length": Lq, "key_length": Lk}
    tensors = {}
    for n, words in enumerate(tensor_lines):
        shape = [extent.get(w) or int(w) for w in words[2:]]
        values = read(directory, f"capture_{n}", shape)
        tensors[words[0]] = values.long() if words[1] == "i32" else values.requires_grad_()
    scalars = {}
    if scalar_names:
        values = np.fromfile(f"{directory}/scalars.bin", dtype="<f8")
        scalars = {name: torch.tensor(x, requires_grad=True) for name, x in zip(scalar_names, values.tolist())}

    q = read(directory, "q", (B, Lq, H, D)).permute(0, 2, 1, 3).requires_grad_()
    k = read(directory, "k", (B, Lk, KVH, D)).permute(0, 2, 1, 3).requires_grad_()
    v = read(directory, "v", (B, Lk, KVH, Dv)).permute(0, 2, 1, 3).requires_grad_()
    d_output = read(directory, "d_output", (B, Lq, H, Dv)).permute(0, 2, 1, 3)
    sinks = read(directory, "sinks", (H,)).requires_grad_() if config.get("sinks") == "true" else None

    k_heads, v_heads = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    score = (q @ k_heads.transpose(-1, -2)) * scale
    b_index = torch.arange(B).view(B, 1, 1, 1)
    h_index = torch.arange(H).view(1, H, 1, 1)
    q_index = torch.arange(Lq).view(1, 1, Lq, 1)
    k_index = torch.arange(Lk).view(1, 1, 1, Lk)
    leaves = {"b": b_index, "h": h_index, "q": q_index, "kv": k_index, "q_len": torch.tensor(Lq),
              "kv_len": torch.tensor(Lk)}
    masked = torch.zeros(B, H, Lq, Lk, dtype=torch.bool)
    if config.get("score_mod"):
        score = Modifier(config["score_mod"], {**leaves, "score": score}, tensors, scalars).value()
        masked = masked | (score <= MASKED)
    if config.get("mask_mod"):
        masked = masked | ~Modifier(config["mask_mod"], leaves, tensors, scalars).value()
    if config["causal"] == "top_left":
        masked = masked | (k_index > q_index)
    elif config["causal"] == "bottom_right":
        masked = masked | (k_index > q_index + (Lk - Lq))
    if config.get("key_padding", "none") != "none":
        flags = read(directory, "key_padding", (B, Lk)) != 0
        hidden = flags if config["key_padding"] == "true_means_ignore" else ~flags
        masked = masked | hidden.view(B, 1, 1, Lk)
    mask_shapes = {"lq_lk": (1, 1, Lq, Lk), "h_lq_lk": (1, H, Lq, Lk), "b_h_lq_lk": (B, H, Lq, Lk),
                   "b_1_lq_lk": (B, 1, Lq, Lk)}
    if config.get("additive_mask", "none") != "none":
        shape = mask_shapes[config["additive_mask"]]
        bias = read(directory, "mask", shape)
        masked = masked | (bias <= MASKED)
        score = score + torch.where(bias <= MASKED, torch.zeros_like(bias), bias)
    masked = masked.expand(B, H, Lq, Lk)
    score = torch.where(masked, torch.full_like(score, -math.inf), score)

    # Softmax over the keys and the sink, shifted by a detached maximum; fully masked rows give 0.
    row_max = score.detach().amax(dim=-1, keepdim=True)
    if sinks is not None:
        row_max = torch.maximum(row_max, sinks.detach().view(1, H, 1, 1))
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    e = torch.exp(score - row_max)
    total = e.sum(dim=-1, keepdim=True)
    if sinks is not None:
        total = total + torch.exp(sinks.view(1, H, 1, 1) - row_max)
    weights = e / torch.where(total == 0, torch.ones_like(total), total)
    output = weights @ v_heads
    (output * d_output).sum().backward()

    def write(name, tensor):
        tensor.detach().contiguous().numpy().astype("<f8").tofile(f"{directory}/{name}.bin")

    write("dq", q.grad.permute(0, 2, 1, 3))
    write("dk", k.grad.permute(0, 2, 1, 3))
    write("dv", v.grad.permute(0, 2, 1, 3))
    if sinks is not None:
        write("d_sinks", sinks.grad)
    for n, words in enumerate(tensor_lines):
        grad = tensors[words[0]].grad if words[1] == "f32" else None
        if grad is not None:
            write(f"d_capture_{n}", grad)
    if scalars:
        write("d_scalars", torch.stack([s.grad if s.grad is not None else torch.zeros(()) for s in scalars.values()]))


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    for case in sys.argv[1:]:
        run_case(case)
