#pragma once
// The consumer's kernel: GQA 4/2, head_dim 32, causal with a left window of 8 keys.
#include <attngen/attngen.hpp>

namespace consumer {
inline constexpr auto sliding_gqa = attngen::attention()
                                         .heads(4)
                                         .kv_heads(2)
                                         .head_dim(32)
                                         .causal(attngen::top_left)
                                         .mask_mod(attngen::sliding_window(8, 0));
}  // namespace consumer
