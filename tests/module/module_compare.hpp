#pragma once
/// Comparison of a module kernel's results with a float64 reference.

#include <string>
#include <vector>

#include "module/module_problem.hpp"

namespace attngen::testing {

/// Largest |kernel - reference| over max(1, largest |reference|). `where` names the worst element.
/// Every reference value must be a number (Catch REQUIRE).
double scaled_error(const std::vector<float>& kernel, const std::vector<double>& reference, std::string& where);

/// The tolerance for `p`'s outputs and weights (support/tolerance.hpp's module_tolerance).
double module_tolerance_for(const module_problem& p);

/// The tolerance for `p`'s gradients: support/tolerance.hpp's gradient_tolerance for the longest of
/// their reductions (a weight's gradient sums over every row of the batch).
double module_gradient_tolerance_for(const module_problem& p);

}  // namespace attngen::testing
