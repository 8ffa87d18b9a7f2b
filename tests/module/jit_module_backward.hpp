#pragma once
/// Runs a module description's backward pass (codegen/module_backward.hpp) through Halide's JIT with
/// the CPU schedule the AOT generator uses.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "module/module_problem.hpp"

namespace attngen::testing {

/// Gradients by name ("d_query", "d_key", "d_value", "d_q_weight", ... "d_out_bias"), each of its
/// input's shape, as float.
using module_kernel_gradients = std::map<std::string, std::vector<float>>;

/// A module description with .with_backward(), its backward compiled once for the running CPU.
class jit_module_backward {
 public:
  explicit jit_module_backward(const mha_desc& desc);
  ~jit_module_backward();
  jit_module_backward(const jit_module_backward&) = delete;
  jit_module_backward& operator=(const jit_module_backward&) = delete;

  /// The gradients for `p`, which has a "d_output" input (add_output_gradient).
  module_kernel_gradients run(const module_problem& p);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace attngen::testing
