#pragma once
/// The module description: PyTorch's `nn.MultiheadAttention` (input projections, attention, output
/// projection) as a constexpr value, with kv heads (GQA/MQA) added.
///
///     constexpr auto encoder_attention = attngen::multihead_attention()
///         .embed_dim(512).heads(8)
///         .key_padding_mask(attngen::mask_kind::boolean)
///         .need_weights(attngen::weights_output::averaged);
///
/// Defaults are PyTorch's: bias on, no bias_kv, no zero attention, sequence-first tensors
/// (batch_first off), no dropout. Embedding sizes are compile-time; batch and lengths are run-time.
///
/// Semantics, PyTorch 1.13's module where it is defined (E = embed_dim, hd = E / heads, KVE = kv_heads x hd):
///
///     q = query Wq^T + bq      (B, L, E)      Wq (E, E)
///     k = key Wk^T + bk        (B, S, KVE)    Wk (KVE, kdim)      then bias_k appended, then a zero key
///     v = value Wv^T + bv      (B, S, KVE)    Wv (KVE, vdim)      then bias_v appended, then a zero value
///     attention per head: softmax(q k^T / sqrt(hd) + masks) with dropout on the weights, times v
///     out = attention Wo^T + bo   (B, L, E)
///
/// Keys appended by add_bias_kv and add_zero_attn are never masked (PyTorch pads its masks with
/// "keep" columns) and come after the S keys in the returned weights, as in PyTorch.
/// Masks: boolean masks use PyTorch's polarity, true = masked out; float masks are added to the scaled
/// scores and values <= -1e38 (including -inf) mask the key out.
/// A query whose keys are all masked gets attention 0, so its output is the output projection's bias
/// (PyTorch 1.13's module gives NaN there).
/// Dropout (training calls only) zeroes each weight with probability p from a counter-based hash of
/// (seed, batch, head, query, key) and scales the kept ones by 1 / (1 - p): the same seed gives the
/// same result bit for bit, whatever the thread count. The returned weights are after dropout, as in
/// PyTorch.

#include <cstdint>

#include "attngen/attention.hpp"

namespace attngen {

/// What kind of mask tensor a kernel takes.
enum class mask_kind : std::uint8_t {
  none,
  boolean,   ///< one byte per element, nonzero = masked out (PyTorch's polarity)
  additive,  ///< the description's element type, added to the scaled score
};

/// Shape of the module's attn_mask, as PyTorch's module accepts it (S counts the input keys only).
enum class attn_mask_shape : std::uint8_t {
  none,
  l_s,      ///< (L, S): the same for every batch and head
  bh_l_s,   ///< (B x heads, L, S): PyTorch's 3-D mask, batch-major
  b_h_l_s,  ///< (B, heads, L, S)
};

/// Whether a module kernel also returns its attention weights.
enum class weights_output : std::uint8_t {
  none,
  per_head,  ///< (B, heads, L, S'), PyTorch's average_attn_weights=False
  averaged,  ///< (B, L, S'), averaged over heads, PyTorch's default
};

/// A complete description of one module kernel. A structural type, so it can be a template argument.
struct mha_desc {
  static constexpr int unset = -1;

  int embed = unset;
  int num_heads = unset;
  int num_kv_heads = unset;  ///< unset: same as num_heads
  int key_dim = unset;       ///< unset: embed
  int value_dim = unset;     ///< unset: embed
  bool projection_bias = true;
  bool bias_kv = false;
  bool zero_attn = false;
  bool batch_major = false;
  bool self_attn = false;
  float dropout_p = 0.0f;
  weights_output weights = weights_output::none;
  causal_alignment causal_mode = causal_alignment::none;
  mask_kind key_padding = mask_kind::none;
  mask_kind mask = mask_kind::none;
  attn_mask_shape mask_dims = attn_mask_shape::none;
  dtype element_type = dtype::f32;
  bool backward = false;  ///< the kernel also has the backward pass (gradients of inputs and weights)

  /// Model width E: the query's features and the output's.
  constexpr mha_desc embed_dim(int n) const { auto d = *this; d.embed = n; return d; }
  /// Query heads; embed_dim must be a multiple of it (head_dim = embed_dim / heads).
  constexpr mha_desc heads(int h) const { auto d = *this; d.num_heads = h; return d; }
  /// Key/value heads (GQA; 1 is MQA): K and V are projected to kv_heads x head_dim features.
  constexpr mha_desc kv_heads(int h) const { auto d = *this; d.num_kv_heads = h; return d; }
  /// Features of the key input (PyTorch's kdim).
  constexpr mha_desc kdim(int n) const { auto d = *this; d.key_dim = n; return d; }
  /// Features of the value input (PyTorch's vdim).
  constexpr mha_desc vdim(int n) const { auto d = *this; d.value_dim = n; return d; }
  /// Biases on the input and output projections (PyTorch's bias).
  constexpr mha_desc bias(bool on) const { auto d = *this; d.projection_bias = on; return d; }
  /// Learned bias_k and bias_v appended as one more key and value (PyTorch's add_bias_kv).
  constexpr mha_desc add_bias_kv(bool on) const { auto d = *this; d.bias_kv = on; return d; }
  /// A zero key and value appended (PyTorch's add_zero_attn).
  constexpr mha_desc add_zero_attn(bool on) const { auto d = *this; d.zero_attn = on; return d; }
  /// Tensors (B, L, features) when on; (L, B, features) when off (PyTorch's default).
  constexpr mha_desc batch_first(bool on) const { auto d = *this; d.batch_major = on; return d; }
  /// Self-attention: key and value are the query (PyTorch's `query is key is value`). The kernel reads
  /// one input and computes Q, K and V in one projection over the packed weights.
  constexpr mha_desc self_attention(bool on) const { auto d = *this; d.self_attn = on; return d; }
  /// Dropout probability on the attention weights in training calls.
  constexpr mha_desc dropout(float p) const { auto d = *this; d.dropout_p = p; return d; }
  /// Also return the attention weights, per head or averaged over heads.
  constexpr mha_desc need_weights(weights_output w) const { auto d = *this; d.weights = w; return d; }
  /// Causal masking of the S input keys, with its alignment when L != S.
  constexpr mha_desc causal(causal_alignment a) const { auto d = *this; d.causal_mode = a; return d; }
  /// A (B, S) key-padding mask is a run-time input.
  constexpr mha_desc key_padding_mask(mask_kind k) const { auto d = *this; d.key_padding = k; return d; }
  /// An attention mask of the given kind and shape is a run-time input.
  constexpr mha_desc attn_mask(mask_kind k, attn_mask_shape s) const {
    auto d = *this; d.mask = k; d.mask_dims = s; return d;
  }
  /// Element type of inputs, weights, masks and outputs (accumulation is float32).
  constexpr mha_desc element(dtype t) const { auto d = *this; d.element_type = t; return d; }
  /// Also generate the backward pass, for training: from the call's inputs, weights, masks and
  /// dropout seed and the loss's gradient of the output, the gradients of query, key and value and
  /// of every weight (attngen/runtime/module_call.hpp's mha_backward_args).
  constexpr mha_desc with_backward() const { auto d = *this; d.backward = true; return d; }

  constexpr int effective_kv_heads() const { return num_kv_heads == unset ? num_heads : num_kv_heads; }
  constexpr int effective_kdim() const { return key_dim == unset ? embed : key_dim; }
  constexpr int effective_vdim() const { return value_dim == unset ? embed : value_dim; }
  /// Features per head, embed_dim / heads.
  constexpr int head_dim() const { return num_heads > 0 ? embed / num_heads : 0; }
  /// Features of the projected keys and values, kv_heads x head_dim.
  constexpr int kv_embed() const { return effective_kv_heads() * head_dim(); }
  /// Keys the module appends after the S input keys.
  constexpr int extra_keys() const { return int(bias_kv) + int(zero_attn); }
  constexpr bool has_dropout() const { return dropout_p > 0.0f; }
  constexpr bool is_causal() const { return causal_mode != causal_alignment::none; }

  /// The attention operator inside the module.
  constexpr attention_desc attention_operator() const {
    return attngen::attention_desc{}
        .heads(num_heads)
        .kv_heads(effective_kv_heads())
        .head_dim(head_dim())
        .causal(causal_mode)
        .element(element_type);
  }

  friend constexpr bool operator==(const mha_desc&, const mha_desc&) = default;
};

/// A 32-bit mixing function (an invertible avalanche step), the building block of dropout_bits.
constexpr std::uint32_t mix_bits(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/// The 32 random bits that decide whether dropout keeps the weight of (batch, head, query, column),
/// where column is the key's index in PyTorch's order (appended keys last). A pure function of its
/// arguments, so kernels, tests and users get the same decision whatever the thread count.
constexpr std::uint32_t dropout_bits(std::uint64_t seed, int batch, int head, int query, int column, int heads) {
  const std::uint32_t row = mix_bits(std::uint32_t(seed) ^
                                     mix_bits(std::uint32_t(seed >> 32) ^
                                              mix_bits(std::uint32_t(batch) * std::uint32_t(heads) + std::uint32_t(head))));
  return mix_bits(mix_bits(row ^ std::uint32_t(query)) ^ mix_bits(std::uint32_t(column)));
}

/// Dropout with probability p keeps a weight when its dropout_bits are at least this.
constexpr std::uint32_t dropout_threshold(float p) { return std::uint32_t(double(p) * 4294967296.0); }

/// Starts a module description with PyTorch's defaults.
constexpr mha_desc multihead_attention() { return {}; }

}  // namespace attngen
