#pragma once
/// One attention problem for tests: a description, run-time sizes and dense host data.

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/attention.hpp"

namespace attngen::testing {

/// Dense, row-major host data in the kernel's default layouts, all as float (f16/bf16 problems hold
/// values already rounded to that type).
struct attention_problem {
  attention_desc desc;
  int batch = 1;
  int query_length = 1;
  int key_length = 1;
  std::vector<float> q;                 ///< (B, Lq, H, D)
  std::vector<float> k;                 ///< (B, Lk, KVH, D)
  std::vector<float> v;                 ///< (B, Lk, KVH, Dv)
  std::vector<float> mask;              ///< shape of desc.additive_mask_shape, empty if none
  std::vector<std::uint8_t> key_padding;  ///< (B, Lk), empty if none
  /// The description's captured tensors, each of capture_shape(n) (i32 values held exactly).
  std::vector<std::vector<float>> captures;
  std::vector<float> scalars;  ///< the description's captured scalars
  std::vector<float> sinks;    ///< (H) attention sinks' logits, empty without sinks

  /// Dense shape of the additive mask, outermost first; empty if none.
  std::vector<int> mask_shape() const;
  /// Shape of captured tensor n, outermost first, from its declared extents.
  std::vector<int> capture_shape(int n) const;
  std::size_t output_size() const;
  std::size_t lse_size() const;
  /// "B3 H32/8 D128/128 Lq17 Lk113 causal=top_left mask=lq_lk pad=true_means_ignore lse f32"
  std::string name() const;
};

/// A problem with uniform random q, k, v in [-1, 1), masks with some -inf and padded keys, all from
/// `seed`. Values are rounded to the description's element type.
attention_problem make_random_problem(const attention_desc& desc, int batch, int query_length, int key_length,
                                      std::uint32_t seed);

/// A gradient of the output for a backward call of `p`: uniform in [-1, 1), (B, Lq, H, Dv), rounded to
/// the description's element type.
std::vector<float> make_random_output_gradient(const attention_problem& p, std::uint32_t seed);

/// Rounds a float to the nearest value of `type` (identity for f32).
float round_to(dtype type, float value);

}  // namespace attngen::testing
