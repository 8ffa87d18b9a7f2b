#pragma once
// A learnable relative-position bias, FlexAttention's signature use of score_mod: every head adds
// table[h][clamp(kv - q, -8, 8) + 8] to its scores. The table is a run-time float tensor, so the
// backward pass writes its gradient beside dq, dk and dv.
#include <attngen/attngen.hpp>

namespace example {

inline constexpr int max_distance = 8;
/// (heads, 2 * max_distance + 1) learned biases.
inline constexpr auto bias_table = attngen::tensor<attngen::capture_type::f32>(
    "table", attngen::dim::heads, attngen::dim::fixed(2 * max_distance + 1));

/// 4 heads sharing 2 kv heads, head_dim 32, causal, with the learned bias; forward and backward.
inline constexpr auto learned_bias_description = attngen::attention()
                                                     .heads(4)
                                                     .kv_heads(2)
                                                     .head_dim(32)
                                                     .causal(attngen::top_left)
                                                     .capture(bias_table)
                                                     .score_mod(attngen::relative_position_bias(bias_table, max_distance))
                                                     .return_lse()
                                                     .with_backward();

}  // namespace example
