#pragma once
// The lowered code of a kernel variant (AVX2, as generated ahead of time), for tests that read what
// Halide made of it.

#include <functional>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/variants.hpp"

namespace attngen::testing {

/// `add_passes` adds custom lowering passes to the pipeline before it is lowered.
inline Halide::Module lowered_kernel(const attention_desc& desc, kernel_variant variant,
                                     const std::function<void(Halide::Pipeline&)>& add_passes = {}) {
  const Halide::Target target("x86-64-linux-avx2-fma-f16c-user_context-no_runtime-no_bounds_query");
  codegen::attention_algorithm a = codegen::define_attention(desc, codegen::cpu_variant_blocking(desc, target, variant));
  codegen::schedule_cpu(a);
  Halide::Pipeline pipeline(a.outputs());
  if (add_passes) add_passes(pipeline);
  return pipeline.compile_to_module(a.arguments(), "kernel", target);
}

/// Visits every statement of every function of `module` (closures included), each copy of a shared
/// subtree as often as it occurs.
inline void visit_code(const Halide::Module& module, Halide::Internal::IRVisitor& visitor) {
  for (const Halide::Internal::LoweredFunc& function : module.functions()) function.body.accept(&visitor);
}

}  // namespace attngen::testing
