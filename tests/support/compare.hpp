#pragma once
/// Comparison of a kernel's results with the float64 reference, reporting the worst element.

#include <string>
#include <vector>

#include "reference/reference_attention.hpp"
#include "support/problem.hpp"

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

}  // namespace attngen::testing
