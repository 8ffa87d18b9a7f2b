#pragma once
// The attention an inference engine's decode loop needs, described once; the build generates the kernel.
#include <attngen/attngen.hpp>

namespace example {

/// Llama-style GQA (32 query heads sharing 8 kv heads, head_dim 128) over a paged KV cache of pages of
/// 16 tokens stored in bf16. Ragged queries let one call serve a batch that mixes a joining sequence's
/// prompt (many queries) with the running sequences' single decode queries, as engines batch prefill
/// with decode; causal bottom-right puts each sequence's queries at the end of its own keys.
inline constexpr auto paged_decode = attngen::attention()
                                         .heads(32)
                                         .kv_heads(8)
                                         .head_dim(128)
                                         .ragged_queries()
                                         .paged_kv(16)
                                         .kv_element(attngen::dtype::bf16)
                                         .causal(attngen::bottom_right);

}  // namespace example
