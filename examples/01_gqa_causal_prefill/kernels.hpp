#pragma once
// The attention this example needs, described once; the build generates the kernel from it.
#include <attngen/attngen.hpp>

namespace example {

/// Llama-style prefill: 32 query heads sharing 8 kv heads, head_dim 128, causal.
inline constexpr auto llama_prefill =
    attngen::attention().heads(32).kv_heads(8).head_dim(128).causal(attngen::top_left);

}  // namespace example
