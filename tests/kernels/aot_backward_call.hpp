#pragma once
// A backward call's storage beside a forward call's (aot_call): the output's gradient and the
// gradients, as attention_backward_args over host tensors.

#include <cstdint>
#include <vector>

#include "attngen/runtime.hpp"
#include "kernels/aot_call.hpp"
#include "support/compare.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

class aot_backward_call {
 public:
  aot_backward_call(const attention_problem& p, aot_call& forward, const std::vector<float>& d_output);

  /// The backward's arguments: the forward call's inputs and results, the output's gradient, the
  /// gradients to write.
  attention_backward_args args();

  /// Sets every gradient element to `value`, so a test can tell what the call wrote.
  void fill_gradients(float value);

  std::vector<float> dq() const;
  std::vector<float> dk() const;
  std::vector<float> dv() const;
  const std::vector<float>& d_sinks() const { return d_sinks_; }
  const std::vector<float>& d_scalars() const { return d_scalars_; }
  kernel_gradients gradients() const { return {dq(), dk(), dv(), d_sinks_, d_captures_, d_scalars_}; }

 private:
  const attention_problem& p_;
  aot_call& forward_;
  std::vector<std::uint8_t> d_output_, dq_, dk_, dv_;
  std::vector<float> d_sinks_, d_scalars_;
  std::vector<std::vector<float>> d_captures_;
};

}  // namespace attngen::testing
