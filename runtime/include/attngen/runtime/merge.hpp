#pragma once
/// Partial attention results merged exactly: the operation FlashInfer calls merge_state and xFormers
/// merge_attentions. A kernel with .return_lse() returns, for the keys it was given, each row's
/// normalised output and log-sum-exp; the attention over the union of disjoint key sets is
///
///     lse = log(sum_p exp(lse_p) [+ exp(sink_h)])        out = sum_p exp(lse_p - lse) out_p
///
/// A part whose row saw no key (lse -inf, output 0) adds nothing; a row no part saw gets output 0 and
/// lse -inf (with sinks: the sink's logit). The sum is taken in double and rounded once to the
/// output's type, so any split of the keys and any order of merging agree to that rounding.
///
/// Shape contract (host tensors; any positive strides with the innermost 1):
///   parts[n].output, output   (B, Lq, H, Dv) f32, f16 or bf16; or packed (total_q, H, Dv)
///   parts[n].lse, lse         (B, H, Lq) float32; packed (H, total_q)
///   sinks                     optional (H) float32: a learned logit that joins each row's denominator
///                             once (the parts computed without it, or with a sink of -inf)
/// `output` and `lse` may be one part's own tensors (merging in place); no other overlap is allowed.

#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

/// One partial result: a kernel's output and log-sum-exp over some of the keys.
struct attention_partial {
  tensor_view output;
  tensor_view lse;
};

/// Writes to `output` and `lse` the attention over the union of the `count` parts' keys. On error
/// (named after the tensor: "parts[1].lse: ...") nothing is written.
status merge(const attention_partial* parts, int count, const tensor_view& output, const tensor_view& lse,
             const tensor_view& sinks = {});

}  // namespace attngen
