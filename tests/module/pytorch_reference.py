"""Reference outputs of PyTorch's nn.MultiheadAttention, in float64, for attngen's module tests.

Usage: pytorch_reference.py CASE_DIR...

Each CASE_DIR holds config.txt (one "key value..." per line; "tensor NAME d0 d1 ..." declares
NAME.bin, dense row-major float64) written by the C++ test. This writes output.bin and, when the case
asks for weights, weights.bin (float64) into the same directory. A case with `backward 1` gives the
output's gradient d_output and, with dropout, `dropout_keep` (B*H, L, S'): each weight's factor,
0 where dropped, 1 / (1 - p) where kept, in PyTorch's key order; this then writes the gradients of
the inputs and the weights (d_query.bin, [d_key.bin, d_value.bin], d_q_weight.bin, ...) from autograd
through torch.nn.functional.multi_head_attention_forward, the function nn.MultiheadAttention calls,
its dropout replaced by that mask.

What the module cannot take directly is expressed through what it can, with the same meaning:
- kv heads (GQA/MQA): the k/v projection rows (and bias_k/bias_v) of kv head g are repeated for each
  query head of its group, which gives exactly the grouped attention.
- causality: a boolean (L, S) mask, true above the diagonal (top_left) or above the diagonal shifted
  by S - L (bottom_right), combined with the attn_mask.
- 4-D (B, H, L, S) attn_mask: reshaped to PyTorch's 3-D (B*H, L, S).
- float key_padding_mask: added to the attn_mask as a (B*H, L, S) float mask.
"""
import sys

import numpy as np
import torch


def read_case(directory):
    config, tensors = {}, {}
    with open(f"{directory}/config.txt") as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] == "tensor":
                shape = [int(w) for w in words[2:]]
                data = np.fromfile(f"{directory}/{words[1]}.bin", dtype="<f8").reshape(shape)
                tensors[words[1]] = torch.from_numpy(data)
            else:
                config[words[0]] = words[1]
    return config, tensors


def run_case(directory):
    config, t = read_case(directory)
    E, H, KVH = int(config["embed"]), int(config["heads"]), int(config["kv_heads"])
    kdim, vdim = int(config["kdim"]), int(config["vdim"])
    B, L, S = int(config["B"]), int(config["L"]), int(config["S"])
    bias, bias_kv, zero_attn = config["bias"] == "1", config["bias_kv"] == "1", config["zero_attn"] == "1"
    batch_first = config["batch_first"] == "1"
    head_dim, group = E // H, H // KVH

    def per_query_head(rows):  # (KVH * head_dim, ...) -> (H * head_dim, ...)
        return rows.reshape(KVH, head_dim, *rows.shape[1:]).repeat_interleave(group, dim=0).reshape(E, *rows.shape[1:])

    module = torch.nn.MultiheadAttention(E, H, dropout=0.0, bias=bias, add_bias_kv=bias_kv,
                                         add_zero_attn=zero_attn, kdim=kdim, vdim=vdim,
                                         batch_first=batch_first, dtype=torch.float64)
    module.eval()
    k_weight, v_weight = per_query_head(t["k_weight"]), per_query_head(t["v_weight"])
    with torch.no_grad():
        if module._qkv_same_embed_dim:
            module.in_proj_weight.copy_(torch.cat([t["q_weight"], k_weight, v_weight]))
        else:
            module.q_proj_weight.copy_(t["q_weight"])
            module.k_proj_weight.copy_(k_weight)
            module.v_proj_weight.copy_(v_weight)
        module.out_proj.weight.copy_(t["out_weight"])
        if bias:
            module.in_proj_bias.copy_(torch.cat([t["q_bias"], per_query_head(t["k_bias"]), per_query_head(t["v_bias"])]))
            module.out_proj.bias.copy_(t["out_bias"])
        if bias_kv:
            module.bias_k.copy_(per_query_head(t["bias_k"]).reshape(1, 1, E))
            module.bias_v.copy_(per_query_head(t["bias_v"]).reshape(1, 1, E))

    attn_mask = None
    if config["attn_mask"] != "none":
        attn_mask = t["attn_mask"]
        if config["attn_mask_shape"] == "b_h_l_s":
            attn_mask = attn_mask.reshape(B * H, L, S)
        if config["attn_mask"] == "boolean":
            attn_mask = attn_mask != 0
    if config["causal"] != "none":
        shift = 0 if config["causal"] == "top_left" else S - L
        above = torch.ones(L, S, dtype=torch.bool).triu(diagonal=1 + shift)
        if attn_mask is None:
            attn_mask = above
        elif attn_mask.dtype == torch.bool:
            attn_mask = attn_mask | above
        else:
            attn_mask = attn_mask.masked_fill(above, float("-inf"))
    key_padding_mask = None
    if config["key_padding"] == "boolean":
        key_padding_mask = t["key_padding"] != 0
    elif config["key_padding"] == "additive":
        padding = t["key_padding"].reshape(B, 1, 1, S).expand(B, H, L, S).reshape(B * H, L, S)
        if attn_mask is None:
            attn_mask = padding
        elif attn_mask.dtype == torch.bool:
            attn_mask = padding.masked_fill(attn_mask, float("-inf"))
        else:
            attn_mask = attn_mask + padding

    if config.get("backward") == "1":
        write_gradients(directory, config, t, attn_mask, key_padding_mask)
        return
    weights = config["weights"]
    if config["self_attention"] == "1":  # the same tensor three times, as PyTorch's self-attention
        key = value = t["query"]
    else:
        key, value = t["key"], t["value"]
    with torch.no_grad():
        output, attention_weights = module(t["query"], key, value, key_padding_mask=key_padding_mask,
                                           need_weights=weights != "none", attn_mask=attn_mask,
                                           average_attn_weights=weights == "averaged")
    output.numpy().astype("<f8").tofile(f"{directory}/output.bin")
    if weights != "none":
        attention_weights.numpy().astype("<f8").tofile(f"{directory}/weights.bin")


def write_gradients(directory, config, t, attn_mask, key_padding_mask):
    E, H, KVH = int(config["embed"]), int(config["heads"]), int(config["kv_heads"])
    kdim, vdim = int(config["kdim"]), int(config["vdim"])
    bias, bias_kv, zero_attn = config["bias"] == "1", config["bias_kv"] == "1", config["zero_attn"] == "1"
    batch_first, self_attention = config["batch_first"] == "1", config["self_attention"] == "1"
    head_dim, group = E // H, H // KVH

    def per_query_head(rows):  # (KVH * head_dim, ...) -> (H * head_dim, ...), differentiably
        return rows.reshape(KVH, head_dim, *rows.shape[1:]).repeat_interleave(group, dim=0).reshape(E, *rows.shape[1:])

    leaves = {name: tensor.clone().requires_grad_() for name, tensor in t.items()
              if name in ("query", "key", "value", "q_weight", "k_weight", "v_weight", "q_bias", "k_bias", "v_bias",
                          "bias_k", "bias_v", "out_weight", "out_bias")}
    query = leaves["query"]
    key = value = query
    if not self_attention:
        key, value = leaves["key"], leaves["value"]
    if batch_first:  # the functional form takes (L, B, E), as the module does inside
        query, key, value = (x.transpose(0, 1) for x in (query, key, value))
    k_weight, v_weight = per_query_head(leaves["k_weight"]), per_query_head(leaves["v_weight"])
    separate = not (kdim == E and vdim == E)
    in_proj_weight = None if separate else torch.cat([leaves["q_weight"], k_weight, v_weight])
    in_proj_bias = None
    if bias:
        in_proj_bias = torch.cat([leaves["q_bias"], per_query_head(leaves["k_bias"]), per_query_head(leaves["v_bias"])])
    bias_k = bias_v = None
    if bias_kv:
        bias_k = per_query_head(leaves["bias_k"]).reshape(1, 1, E)
        bias_v = per_query_head(leaves["bias_v"]).reshape(1, 1, E)
    dropout_p = float(config.get("dropout", "0"))
    dropout_calls = []
    if dropout_p > 0:
        keep = t["dropout_keep"]

        def imposed_dropout(weights, p=0.5, training=True, inplace=False):
            dropout_calls.append(p)
            return weights * keep
        torch.nn.functional.dropout = imposed_dropout
    # With dropout the weights must pass through torch.nn.functional.dropout, replaced above: PyTorch
    # 2's path without need_weights calls scaled_dot_product_attention, which draws its own mask.
    output, _ = torch.nn.functional.multi_head_attention_forward(
        query, key, value, E, H, in_proj_weight, in_proj_bias, bias_k, bias_v, zero_attn, dropout_p,
        leaves["out_weight"], leaves["out_bias"] if bias else None, training=dropout_p > 0,
        key_padding_mask=key_padding_mask, need_weights=dropout_p > 0, attn_mask=attn_mask,
        use_separate_proj_weight=separate, q_proj_weight=leaves["q_weight"] if separate else None,
        k_proj_weight=k_weight if separate else None, v_proj_weight=v_weight if separate else None)
    if dropout_p > 0 and not dropout_calls:
        raise RuntimeError("multi_head_attention_forward did not call torch.nn.functional.dropout: this "
                           f"PyTorch ({torch.__version__}) draws its own mask, which the reference cannot replace")
    if batch_first:
        output = output.transpose(0, 1)
    output.backward(t["d_output"])
    for name, leaf in leaves.items():
        gradient = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
        gradient.numpy().astype("<f8").tofile(f"{directory}/d_{name}.bin")


if __name__ == "__main__":
    torch.set_num_threads(1)
    for case_directory in sys.argv[1:]:
        run_case(case_directory)
