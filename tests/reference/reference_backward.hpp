#pragma once
/// Naive float64 gradients of attention, from the softmax's Jacobian written out: the oracle of the
/// backward kernels. Independent of codegen; the score modifier's derivative is the float64
/// interpreter's (reference_modifiers.hpp).

#include <vector>

#include "support/problem.hpp"

namespace attngen::testing {

struct reference_gradients {
  std::vector<double> dq;       ///< (B, Lq, H, D)
  std::vector<double> dk;       ///< (B, Lk, KVH, D)
  std::vector<double> dv;       ///< (B, Lk, KVH, Dv)
  std::vector<double> d_sinks;  ///< (H); empty without sinks
  /// Of each captured tensor (its shape; empty for an i32 tensor or one the score modifier does not
  /// read), and of the captured scalars (one each; empty without scalars).
  std::vector<std::vector<double>> d_captures;
  std::vector<double> d_scalars;
};

/// The gradients of sum(output * d_output) with respect to q, k, v (the sinks' logits, the float
/// tensors and the scalars the score modifier reads) for
/// problem `p`, d_output (B, Lq, H, Dv). Fully masked rows contribute nothing.
reference_gradients reference_attention_backward(const attention_problem& p, const std::vector<float>& d_output);

}  // namespace attngen::testing
