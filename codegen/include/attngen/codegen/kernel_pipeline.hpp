#pragma once
/// The Halide pipeline of a kernel, with the passes over lowered code that every kernel runs.

#include <vector>

#include "Halide.h"

namespace attngen::codegen {

/// The pipeline of a scheduled kernel's outputs, with the passes every kernel runs, ahead of time
/// and in the JIT alike: the dead branches' cleanup (dead_branches.hpp). Code the runtime calls adds
/// leave_argument_checks_to_runtime (argument_checks.hpp).
Halide::Pipeline kernel_pipeline(const std::vector<Halide::Func>& outputs);

}  // namespace attngen::codegen
