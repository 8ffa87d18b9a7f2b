#pragma once
/// Each description is generated as several kernels with different tilings; the generated wrapper
/// picks one per call from the shape, invisibly to the user. Header-only: the generator names the
/// variants with it, and the runtime applies the rule.

#include <cstdint>

namespace attngen {

enum class kernel_variant : int {
  general = 0,        ///< K transposed per task, tiles of about 32 (query, group head) rows: long prefill
  short_keys = 1,     ///< tiles of about 16 rows, 1-vector key blocks: for Lk of a few vectors
  single_query = 2,   ///< one query per tile (the group's heads as rows): decoding
  short_queries = 3,  ///< K copied, not transposed, the tile's rows in vector lanes: few rows per key
};
inline constexpr int kernel_variant_count = 4;

/// Key lengths up to this use short_keys: below it, the other variants' 256-key blocks are mostly
/// padding. Measured (JIT, 2 threads, us, short_keys against short_queries): Lq = Lk = 77, B4 H8 D32
/// 396/534; Lk 80: Lq512 B4 H8 D32 2719/3409, Lq16 B8 H16 D64 714/802, Lq1024 B1 H16 D64 6669/6326;
/// Lk 96: Lq1024 H16 D64 7694/6554 (past the crossover), Lq1024 H32/8 D128 19162/24130.
inline constexpr std::int64_t short_keys_max_length = 80;

/// Name used in generated symbols and file names.
constexpr const char* name_of(kernel_variant v) {
  switch (v) {
    case kernel_variant::general: return "general";
    case kernel_variant::short_keys: return "short_keys";
    case kernel_variant::single_query: return "single_query";
    case kernel_variant::short_queries: return "short_queries";
  }
  return "?";
}

/// Rows (query, group head pairs) each key must serve before transposing K pays for itself: below
/// this, short_queries. Measured crossover, fp32 AVX-512: B1-4 H16 D64 and H32 KVH8 D128, causal
/// and not, L256 to L4096 (rows per key from 512 to 4096); at 2048 the two are within 4%.
inline constexpr std::int64_t keys_in_lanes_min_rows_per_key = 2048;

/// The variant that wastes least for Lq queries and Lk keys with GQA groups of `group_size` heads.
/// `single_query_threshold` is the fewest queries that fill a 16-row short_queries tile (that
/// variant's tiles may hold more); a single-query tile holds `group_size` rows, and below 4 rows its
/// register tiles are up to 4x less efficient. single_query streams K and V once per query, so it
/// serves only fewer queries than the threshold, and then when a 16-row tile's unused rows would cost
/// more than its own penalty (measured at B1 H32 KVH8 D128, Lq = Lk = 1023, AVX-512: general 55 ms,
/// single_query 127 ms). Under causality each key serves half the rows.
constexpr kernel_variant choose_variant(std::int64_t query_length, std::int64_t key_length, int group_size,
                                        bool causal, int single_query_threshold) {
  const std::int64_t single_query_penalty = group_size >= 4 ? 1 : 4 / group_size;
  if (query_length > 0 && query_length < single_query_threshold &&
      single_query_threshold > query_length * single_query_penalty)
    return kernel_variant::single_query;
  if (key_length <= short_keys_max_length) return kernel_variant::short_keys;
  const std::int64_t rows_per_key = query_length * group_size / (causal ? 2 : 1);
  if (rows_per_key < keys_in_lanes_min_rows_per_key) return kernel_variant::short_queries;
  return kernel_variant::general;
}

/// A backward pass's CPU code comes in one pass, a task per (kv head, batch) that recomputes each
/// weight once for dK, dV and dQ, and in two, a task per key block and per query tile that each
/// recompute it (7 products to 5): more tasks, the same terms added in the same order, the same bits.
enum class backward_passes : int { one = 1, two = 2 };

/// Two passes took 1.2-1.4x one pass's backward time (train_gqa_causal, train_mha, 2 threads, 2026-11-27):
/// one pass while its tasks keep at least 3/4 of `threads` busy over the call.
constexpr backward_passes choose_backward_passes(std::int64_t tasks, int threads) {
  if (threads <= 1) return backward_passes::one;
  const std::int64_t rounds = (tasks + threads - 1) / threads;
  return 4 * tasks >= 3 * rounds * threads ? backward_passes::one : backward_passes::two;
}

/// Whether a module generates `variant`. A self-attention module's keys are its queries, plus at
/// most two appended keys: choose_variant takes single_query only for fewer queries than its
/// threshold (at most 16 on any CPU target), so for at most 17 keys, where short_keys
/// serves as well. Such modules are generated without single_query, saving its build cost.
constexpr bool module_has_variant(kernel_variant variant, bool self_attention) {
  return !(self_attention && variant == kernel_variant::single_query);
}

/// choose_variant for a module call: short_keys where a self-attention module lacks single_query.
constexpr kernel_variant choose_module_variant(std::int64_t query_length, std::int64_t key_length, int group_size,
                                               bool causal, int single_query_threshold, bool self_attention) {
  const kernel_variant chosen = choose_variant(query_length, key_length, group_size, causal, single_query_threshold);
  return module_has_variant(chosen, self_attention) ? chosen : kernel_variant::short_keys;
}

}  // namespace attngen
