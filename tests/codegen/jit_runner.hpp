#pragma once
/// Runs an attention description through Halide's JIT with the same algorithm and CPU schedule that
/// the AOT generator uses, so the wide configuration matrix needs no per-configuration build step.

#include <memory>
#include <string>
#include <vector>

#include "attngen/runtime/detail/variants.hpp"
#include "support/problem.hpp"
#include "support/sequence_batch.hpp"

namespace attngen::testing {

struct jit_result {
  std::vector<float> output;
  std::vector<float> lse;
};

/// A description compiled once for the running CPU in one kernel variant, callable for any sizes.
class jit_kernel {
 public:
  /// `target`: a Halide target string this CPU runs; empty means the best the CPU supports.
  /// `finer_target`: another target of the same generated kernel (a fat binary's fallback), whose
  /// finer tiles give the visibility table's finest grid; empty: the kernel is generated for
  /// `target` alone. `bf16_dot_products`: the AVX512-BF16 tier's algorithm wherever it applies (keys
  /// in lanes), its dot products lowered as Halide's generic vector reductions: the JIT cannot run the
  /// tier's own code (codegen/src/emit/llc_object.hpp), AOT kernels do.
  explicit jit_kernel(const attention_desc& desc, kernel_variant variant = kernel_variant::general,
                      const std::string& target = "", const std::string& finer_target = "",
                      bool bf16_dot_products = false);
  ~jit_kernel();
  jit_kernel(const jit_kernel&) = delete;
  jit_kernel& operator=(const jit_kernel&) = delete;

  jit_result run(const attention_problem& p);
  /// A batch whose sequences differ in length, one call per sequence on the views the runtime cuts
  /// (attngen/runtime/detail/sequence_views.hpp); writes the batch's output and lse. Sequences
  /// without keys are filled as the runtime fills them (0, and -inf or the sink's logit).
  void run(sequence_batch& batch);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace attngen::testing
