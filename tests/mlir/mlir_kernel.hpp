#pragma once
/// A description exported as MLIR (attngen::mlir_export::emit_mlir), verified by mlir-opt-14, lowered
/// with the documented pipeline, compiled (mlir-translate-14, llc-14, the C compiler) into a shared
/// library with a small C shim, loaded, and run on test problems.

#include <memory>
#include <string>
#include <vector>

#include "attngen/mlir/emit_mlir.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

struct mlir_result {
  std::vector<float> output;
  std::vector<float> lse;
};

class mlir_kernel {
 public:
  /// Throws std::runtime_error with the tool's own output when a step fails.
  explicit mlir_kernel(const attention_desc& desc, const mlir_export::mlir_options& options = {});
  ~mlir_kernel();
  mlir_kernel(const mlir_kernel&) = delete;
  mlir_kernel& operator=(const mlir_kernel&) = delete;

  mlir_result run(const attention_problem& p) const;

 private:
  attention_desc desc_;
  std::string directory_;
  void* library_ = nullptr;
  void (*call_)(void* results, void* const* tensors, const float* scalars) = nullptr;
};

/// Runs mlir-opt-14 on the emitted text alone: empty when the module parses and verifies, else the
/// verifier's message.
std::string verify_mlir(const std::string& module_text);

}  // namespace attngen::testing
