#pragma once
/// Comparison of a kernel's results with the float64 reference, reporting the worst element.

#include <string>
#include <vector>

#include "reference/reference_attention.hpp"
#include "reference/reference_backward.hpp"
#include "support/problem.hpp"
#include "support/sequence_batch.hpp"
#include "support/tolerance.hpp"

namespace attngen::testing {

struct comparison {
  bool ok = true;
  double max_output_error = 0;
  double output_tolerance = 0;
  std::string first_failure;  ///< where and how the first out-of-tolerance element differs; empty if ok
};

/// Compares output (B, Lq, H, Dv) and, when the description returns it, lse (B, H, Lq). NaN must
/// match NaN position for position; -inf must match -inf. `merges`: the results are partial results
/// merged that many times (support/tolerance.hpp).
/// `by`: the code that computed them (support/tolerance.hpp).
comparison compare_with_reference(const attention_problem& p, const reference_result& expected,
                                  const std::vector<float>& output, const std::vector<float>& lse, int merges = 0,
                                  computed_by by = computed_by::exact_code);

/// Compares each sequence of a batch, as the kernel wrote it into the batch's output and lse, with
/// the reference on that sequence's own problem; the first failure names the sequence.
comparison compare_sequences_with_reference(const sequence_batch& batch, computed_by by = computed_by::exact_code);

/// With int8 keys and values: each sequence's output against the reference on the values before
/// quantisation, within int8_quantisation_bound (support/tolerance.hpp).
comparison compare_sequences_with_unquantised(const sequence_batch& batch);

/// A backward kernel's gradients as floats: dq, dk, dv, [d_sinks], per captured tensor (empty where
/// it has no gradient), [d_scalars].
struct kernel_gradients {
  std::vector<float> dq, dk, dv, d_sinks;
  std::vector<std::vector<float>> d_captures;
  std::vector<float> d_scalars;
};

/// Each gradient the description has against the float64 reference's, within gradient_tolerance
/// (support/tolerance.hpp) of its reduction: one entry per gradient compared, empty where it agrees,
/// else where and how it differs first.
std::vector<std::string> gradient_failures(const attention_problem& p, const reference_gradients& expected,
                                           const kernel_gradients& got);

}  // namespace attngen::testing
