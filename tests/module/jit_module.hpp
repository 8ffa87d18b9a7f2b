#pragma once
/// Runs a module description through Halide's JIT with the same algorithm, CPU schedule and parts
/// that the AOT generator uses, the parts one after the other as the runtime runs them.

#include <memory>
#include <string>
#include <vector>

#include "Halide.h"
#include "attngen/runtime/detail/variants.hpp"
#include "module/module_problem.hpp"

namespace attngen::testing {

/// A problem's tensor as a Halide buffer of `type` (dims reversed: innermost first); boolean masks
/// as bytes.
Halide::Buffer<> to_buffer(Halide::Type type, const host_tensor& t);

struct module_result {
  std::vector<float> output;   ///< module_problem::output_shape()
  std::vector<float> weights;  ///< module_problem::weights_shape(); empty without need_weights
};

/// A module description compiled once for the running CPU, its attention in one kernel variant.
class jit_module {
 public:
  explicit jit_module(const mha_desc& desc, kernel_variant variant = kernel_variant::general);
  ~jit_module();
  jit_module(const jit_module&) = delete;
  jit_module& operator=(const jit_module&) = delete;

  module_result run(const module_problem& p);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace attngen::testing
