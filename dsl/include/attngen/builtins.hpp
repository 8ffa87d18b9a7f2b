#pragma once
/// Common score and mask modifiers, written with the modifier DSL (attngen/modifiers.hpp): each is one
/// line for a user, and each is only an expression, so they combine with && and with each other.
///
///     constexpr auto local = attngen::attention().heads(8).head_dim(128)
///         .mask_mod(attngen::causal_mask(attngen::top_left) && attngen::sliding_window(1024, 0));

#include "attngen/attention.hpp"

namespace attngen {

/// Causal visibility as a mask: top_left sees kv <= q; bottom_right kv <= q + (Lk - Lq).
constexpr auto causal_mask(causal_alignment alignment) {
  using namespace mod;
  return alignment == causal_alignment::bottom_right ? (kv <= q + (kv_len - q_len)) : (kv <= q);
}

/// Keys within `left` positions before and `right` after the query: q - left <= kv <= q + right.
constexpr auto sliding_window(int left, int right) {
  using namespace mod;
  return q - left <= kv && kv <= q + right;
}

/// ALiBi (Press et al.): score + m_h * (kv - q), with the paper's slopes m_h = 2^(-8 (h + 1) / heads).
constexpr auto alibi(int heads) {
  using namespace mod;
  return score + exp2(to_float(h + 1) * (-8.0f / float(heads))) * to_float(kv - q);
}

/// Soft-capping (Gemma 2, Grok): cap * tanh(score / cap).
constexpr auto softcap(float cap) {
  using namespace mod;
  return cap * tanh(score / cap);
}
/// Soft-capping with the cap given at run time.
constexpr auto softcap(const scalar_capture& cap) {
  using namespace mod;
  return cap() * tanh(score / cap());
}

/// Prefix-LM: every query sees the first prefix[b] keys, and the rest causally (top left).
/// `prefix` is an i32 tensor of shape (batch).
constexpr auto prefix_lm(const captured_tensor<capture_type::i32>& prefix) {
  using namespace mod;
  return kv < prefix(b) || kv <= q;
}

/// Document masking for packed sequences: a query sees only keys of its own document. `document` is
/// an i32 tensor (batch, key_length) of document ids (queries are the same positions: Lq == Lk).
constexpr auto document_mask(const captured_tensor<capture_type::i32>& document) {
  using namespace mod;
  return document(b, q) == document(b, kv);
}

/// A learned relative-position bias: score + table[h][clamp(kv - q, -max_distance, max_distance) +
/// max_distance]. `table` is an f32 tensor (heads, 2 * max_distance + 1).
constexpr auto relative_position_bias(const captured_tensor<capture_type::f32>& table, int max_distance) {
  using namespace mod;
  return score + table(h, min(max(kv - q, -max_distance), max_distance) + max_distance);
}

}  // namespace attngen
