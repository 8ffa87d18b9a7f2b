#pragma once
// The attention this example needs, described once; the build generates the kernel from it.
#include <attngen/attngen.hpp>

namespace example {

/// A long causal sequence split across processes: each call a slice of the whole sequence (global
/// positions) returning its partial result (the log-sum-exp) for attngen::ring_attention to merge.
inline constexpr auto long_context = attngen::attention()
                                         .heads(8)
                                         .head_dim(128)
                                         .causal(attngen::top_left)
                                         .return_lse()
                                         .with_global_positions();

}  // namespace example
