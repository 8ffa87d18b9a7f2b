#pragma once
// The descriptions the benchmark cases run, generated ahead of time like any user's kernels.
#include "attngen/attngen.hpp"

namespace bench_kernels {

inline constexpr auto gqa = attngen::attention().heads(32).kv_heads(8).head_dim(128);
inline constexpr auto gqa_causal = gqa.causal(attngen::top_left);
inline constexpr auto gqa_bf16 = gqa.element(attngen::dtype::bf16);
inline constexpr auto mha_small = attngen::attention().heads(8).head_dim(64);
inline constexpr auto mha_causal = attngen::attention().heads(16).head_dim(64).causal(attngen::top_left);
inline constexpr auto long_causal = attngen::attention().heads(8).kv_heads(8).head_dim(128).causal(attngen::top_left);

}  // namespace bench_kernels
