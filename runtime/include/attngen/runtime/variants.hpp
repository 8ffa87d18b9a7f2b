#pragma once
/// Each description is generated as several kernels with different tilings; the generated wrapper
/// picks one per call from the shape, invisibly to the user. Header-only: the generator names the
/// variants with it, and the runtime applies the rule.

#include <cstdint>

namespace attngen {

enum class kernel_variant : int {
  general = 0,       ///< tiles of about 16 (query, group head) rows, 8-vector key blocks
  short_keys = 1,    ///< the same rows, 1-vector key blocks: for Lk of a few vectors
  single_query = 2,  ///< one query per tile (the group's heads as rows): decoding
};
inline constexpr int kernel_variant_count = 3;

/// Key lengths up to this use short_keys.
inline constexpr std::int64_t short_keys_max_length = 32;

/// Name used in generated symbols and file names.
constexpr const char* name_of(kernel_variant v) {
  switch (v) {
    case kernel_variant::general: return "general";
    case kernel_variant::short_keys: return "short_keys";
    case kernel_variant::single_query: return "single_query";
  }
  return "?";
}

/// The variant that wastes least for Lq queries and Lk keys. A general tile holds
/// `general_queries_per_tile` queries; a single-query tile holds `group_size` rows, and below 4 rows
/// its register tiles are up to 4x less efficient. single_query wins when the general tile's unused
/// rows cost more than that.
constexpr kernel_variant choose_variant(std::int64_t query_length, std::int64_t key_length, int group_size,
                                        int general_queries_per_tile) {
  const std::int64_t tiles = (query_length + general_queries_per_tile - 1) / general_queries_per_tile;
  const std::int64_t general_rows = tiles * general_queries_per_tile;
  const std::int64_t single_query_penalty = group_size >= 4 ? 1 : 4 / group_size;
  if (query_length > 0 && general_rows > query_length * single_query_penalty) return kernel_variant::single_query;
  if (key_length <= short_keys_max_length) return kernel_variant::short_keys;
  return kernel_variant::general;
}

}  // namespace attngen
