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
/// long_causal with a left window of 1024 keys: block sparsity must make it cost L x window, not L^2.
inline constexpr auto sliding_window = long_causal.mask_mod(attngen::sliding_window(1024, 0));
/// long_causal over packed documents, their ids a run-time (B, Lk) tensor.
inline constexpr auto document = attngen::tensor<attngen::capture_type::i32>("document", attngen::dim::batch,
                                                                            attngen::dim::key_length);
inline constexpr auto document_mask = long_causal.capture(document).mask_mod(attngen::document_mask(document));

}  // namespace bench_kernels
