#pragma once
/// Reference results from PyTorch's nn.MultiheadAttention in float64 (Debian's python3-torch under
/// /usr/bin/python3), produced at test time by pytorch_reference.py from the problems' own data.

#include <map>
#include <string>
#include <vector>

#include "module/module_problem.hpp"

namespace attngen::testing {

struct module_reference {
  std::vector<double> output;   ///< module_problem::output_shape()
  std::vector<double> weights;  ///< module_problem::weights_shape(); empty without need_weights
};

/// Runs PyTorch once over all `problems` (inference: no dropout) and returns their results in order.
/// Throws std::runtime_error naming the problem when PyTorch fails or is missing.
std::vector<module_reference> pytorch_references(const std::vector<module_problem>& problems);

/// Gradients by name ("d_query", "d_key", "d_value", "d_q_weight", ... "d_out_bias", those of the
/// problem's inputs), each of its input's shape.
using module_gradients = std::map<std::string, std::vector<double>>;

/// Runs PyTorch's autograd once over all `problems`, each with a "d_output" input
/// (add_output_gradient), dropout drawn as the kernel draws it (attngen::dropout_bits) when training,
/// and returns their gradients in order. Throws std::runtime_error naming the problem when PyTorch
/// fails or is missing.
std::vector<module_gradients> pytorch_gradients(const std::vector<module_problem>& problems);

}  // namespace attngen::testing
