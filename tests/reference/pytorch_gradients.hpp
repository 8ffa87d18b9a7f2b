#pragma once
/// Gradients of the attention operator from PyTorch's autograd in float64 (Debian's python3-torch
/// under /usr/bin/python3), produced at test time by pytorch_gradients.py from the problems' own data:
/// the oracle of the float64 reference backward.

#include <vector>

#include "reference/reference_backward.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

/// Runs PyTorch once over every problem with its output gradient; the gradients in order. Throws
/// std::runtime_error when PyTorch fails or is missing.
std::vector<reference_gradients> pytorch_gradients(const std::vector<attention_problem>& problems,
                                                   const std::vector<std::vector<float>>& d_outputs);

}  // namespace attngen::testing
