"""Exports a PyTorch nn.MultiheadAttention for the attngen example: its state_dict, an input batch
and PyTorch's output for it, as raw little-endian float32 files plus a manifest.

Usage: export_from_pytorch.py OUTPUT_DIR

The module matches example::encoder_attention in kernels.hpp: embed_dim 256, 8 heads, batch_first,
boolean key_padding_mask, averaged attention weights. A real app would export a trained model the
same way (any state_dict of the same shape).
"""
import os
import sys

import torch

EMBED_DIM, HEADS, BATCH, LENGTH = 256, 8, 4, 77


def write(directory, name, tensor, manifest):
    data = tensor.detach().contiguous()
    if data.dtype == torch.bool:
        data = data.to(torch.uint8)
    else:
        data = data.to(torch.float32)
    data.numpy().tofile(os.path.join(directory, name + ".bin"))
    manifest.write(f"{name} {' '.join(str(d) for d in data.shape)}\n")


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    torch.manual_seed(2024)
    module = torch.nn.MultiheadAttention(EMBED_DIM, HEADS, batch_first=True).eval()
    with torch.no_grad():  # a trained model's biases are not zero, unlike a fresh module's
        module.in_proj_bias.uniform_(-0.5, 0.5)
        module.out_proj.bias.uniform_(-0.5, 0.5)
    x = torch.rand(BATCH, LENGTH, EMBED_DIM) * 2 - 1
    lengths = torch.tensor([LENGTH, 60, 33, 1])
    padding = torch.arange(LENGTH)[None, :] >= lengths[:, None]  # True = padding, ignored
    with torch.no_grad():
        output, weights = module(x, x, x, key_padding_mask=padding, need_weights=True)
    with open(os.path.join(directory, "manifest.txt"), "w") as manifest:
        for name, tensor in module.state_dict().items():
            write(directory, name, tensor, manifest)
        write(directory, "input", x, manifest)
        write(directory, "key_padding_mask", padding, manifest)
        write(directory, "pytorch_output", output, manifest)
        write(directory, "pytorch_weights", weights, manifest)


if __name__ == "__main__":
    main()
