#pragma once
/// The module backward tests' common steps (JIT, AOT, GPU): their problems, and the comparison of a
/// kernel's gradients with PyTorch's.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "module/module_problem.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configurations.hpp"

namespace attngen::testing {

/// Random problems of `desc` at `shapes`, each with an output gradient, in training where the
/// description has dropout (so the backward redraws the forward's mask).
std::vector<module_problem> make_module_backward_problems(const mha_desc& desc, const std::vector<shape>& shapes,
                                                          std::uint32_t seed);

/// Each of PyTorch's gradients against the kernel's of the same name, within
/// module_gradient_tolerance_for(p): Catch checks naming the problem, the gradient and its worst element.
void check_module_gradients(const module_problem& p, const std::map<std::string, std::vector<float>>& got,
                            const module_gradients& expected);

}  // namespace attngen::testing
