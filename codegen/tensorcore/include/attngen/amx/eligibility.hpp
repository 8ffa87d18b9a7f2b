#pragma once
/// Which descriptions the AMX path (attngen/amx/flash_forward.hpp) takes: read by the generator, which
/// writes the path's kernel only for them, and by the tests.

#include "attngen/attention.hpp"

namespace attngen::amx {

/// The largest head dim: a worker's scratch (q's tiles, the output of its task's rows) stays under 1 MiB.
inline constexpr int largest_head_dim = 256;

/// Why the AMX path does not take `d` (static text), or null when it does. Calls of descriptions it
/// does not take, and calls on CPUs without AMX, run the Halide code.
constexpr const char* refusal(const attention_desc& d) {
  if (d.element_type != dtype::bf16 || d.effective_kv_element() != dtype::bf16)
    return "the AMX path takes descriptions whose queries, keys and values are bf16";
  if (d.effective_v_head_dim() != d.qk_head_dim) return "v_head_dim differs from head_dim";
  if (d.qk_head_dim % 32 != 0 || d.qk_head_dim > largest_head_dim)
    return "head_dim is not a multiple of 32 up to 256";
  if (d.queries != query_layout::dense || d.kv != kv_layout::dense)
    return "ragged queries and KV-cache layouts run the Halide code";
  if (d.global_positions) return "global positions run the Halide code";
  return nullptr;
}

}  // namespace attngen::amx
