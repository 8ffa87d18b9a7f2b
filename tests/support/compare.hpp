#pragma once
/// Comparison of a kernel's results with the float64 reference, reporting the worst element.

#include <string>
#include <vector>

#include "reference/reference_attention.hpp"
#include "support/problem.hpp"
#include "support/sequence_batch.hpp"

namespace attngen::testing {

struct comparison {
  bool ok = true;
  double max_output_error = 0;
  double output_tolerance = 0;
  std::string first_failure;  ///< where and how the first out-of-tolerance element differs; empty if ok
};

/// Compares output (B, Lq, H, Dv) and, when the description returns it, lse (B, H, Lq). NaN must
/// match NaN position for position; -inf must match -inf.
comparison compare_with_reference(const attention_problem& p, const reference_result& expected,
                                  const std::vector<float>& output, const std::vector<float>& lse);

/// Compares each sequence of a batch, as the kernel wrote it into the batch's output and lse, with
/// the reference on that sequence's own problem; the first failure names the sequence.
comparison compare_sequences_with_reference(const sequence_batch& batch);

/// With int8 keys and values: each sequence's output against the reference on the values before
/// quantisation, within int8_quantisation_bound (support/tolerance.hpp).
comparison compare_sequences_with_unquantised(const sequence_batch& batch);

}  // namespace attngen::testing
