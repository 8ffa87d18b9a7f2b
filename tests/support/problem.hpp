#pragma once
/// One attention problem for tests: a description, run-time sizes and dense host data.

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/arguments.hpp"
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
  /// With global positions: query_start, key_start, query_total, key_total (attngen/arguments.hpp's
  /// global_position order); the call is that slice of the whole sequence.
  int positions[global_position_count] = {};

  /// Where the call's query 0 and key 0 lie in the whole sequence, and the whole's lengths: the
  /// positions, or the call's own without global positions.
  int query_start() const { return desc.global_positions ? positions[int(global_position::query_start)] : 0; }
  int key_start() const { return desc.global_positions ? positions[int(global_position::key_start)] : 0; }
  int query_total() const { return desc.global_positions ? positions[int(global_position::query_total)] : query_length; }
  int key_total() const { return desc.global_positions ? positions[int(global_position::key_total)] : key_length; }

  /// Dense shape of the additive mask, outermost first; empty if none.
  std::vector<int> mask_shape() const;
  /// Shape of captured tensor n, outermost first, from its declared extents.
  std::vector<int> capture_shape(int n) const;
  std::size_t output_size() const;
  std::size_t lse_size() const;
  /// "B3 H32/8 D128/128 Lq17 Lk113 causal=top_left mask=lq_lk pad=true_means_ignore lse f32"
  std::string name() const;
};

/// A problem with uniform random q, k, v in [-1, 1), masks with some -inf and padded keys, with global
/// positions a random slice of a longer sequence (up to twice as long, plus 40), all from `seed`. Values are rounded to the description's element type.
attention_problem make_random_problem(const attention_desc& desc, int batch, int query_length, int key_length,
                                      std::uint32_t seed);

/// A run of consecutive rows of one dimension of a tensor.
struct row_run {
  std::int64_t start = 0, length = 0;
};

/// The rows `runs` of dimension `dim` (outermost first) of dense `values` of `shape`, one run after
/// another within each index of the outer dimensions.
std::vector<float> rows_of(const std::vector<float>& values, const std::vector<std::int64_t>& shape, int dim,
                           const std::vector<row_run>& runs);

/// A problem over a whole sequence for a description with global positions (positions {0, 0, Lq,
/// Lk}), whose slices (slice_of) are calls on parts of it.
attention_problem make_whole_problem(const attention_desc& desc, int batch, int query_length, int key_length,
                                     std::uint32_t seed);

/// The call on queries [query_start, query_start + query_count) and keys [key_start, key_start +
/// key_count) of `whole` (make_whole_problem): its tensors and masks cut to those rows and keys, its
/// captures, sinks, scalars and totals the whole's.
attention_problem slice_of(const attention_problem& whole, int query_start, int query_count, int key_start,
                           int key_count);

/// A gradient of the output for a backward call of `p`: uniform in [-1, 1), (B, Lq, H, Dv), rounded to
/// the description's element type.
std::vector<float> make_random_output_gradient(const attention_problem& p, std::uint32_t seed);

/// Rounds a float to the nearest value of `type` (identity for f32).
float round_to(dtype type, float value);

}  // namespace attngen::testing
