#pragma once
/// Naive float64 attention: the oracle every kernel is checked against. Written from the semantics
/// documented in attngen/attention.hpp, independently of codegen (no tiles, no online softmax).

#include <vector>

#include "support/problem.hpp"

namespace attngen::testing {

struct reference_result {
  std::vector<double> output;  ///< (B, Lq, H, Dv)
  std::vector<double> lse;     ///< (B, H, Lq); -inf for fully masked rows (the sink's logit with sinks)
};

reference_result reference_attention(const attention_problem& p);

/// Row (b, h, i) as the forward sees it, per key: the score after the modifier, -inf where masked,
/// plus the additive mask; and the scaled q.k the score modifier read.
struct reference_row {
  std::vector<double> score, scaled_dot;
};
reference_row reference_scores(const attention_problem& p, int b, int h, int i);

}  // namespace attngen::testing
