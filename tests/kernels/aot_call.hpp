#pragma once
/// Builds runtime arguments for a generated kernel from a test problem, holding the typed storage.

#include <cstdint>
#include <vector>

#include "attngen/runtime.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

class aot_call {
 public:
  explicit aot_call(const attention_problem& p);

  /// Dense views of every tensor the problem's description takes.
  attention_args args();
  /// Output and lse as floats.
  std::vector<float> output() const;
  std::vector<float> lse() const { return lse_; }
  /// Sets every output byte to `byte`, so a test can tell whether anything was written.
  void poison_outputs(std::uint8_t byte);
  bool outputs_all_equal(std::uint8_t byte) const;

 private:
  const attention_problem& p_;
  std::vector<std::uint8_t> q_, k_, v_, mask_, output_;
  std::vector<std::vector<std::uint8_t>> captures_;  ///< i32 or f32 bytes, per captured tensor
  std::vector<float> lse_;
};

}  // namespace attngen::testing
