#pragma once
/// Which of Halide's checks an ahead-of-time kernel leaves to the attngen runtime.

#include "Halide.h"

namespace attngen::codegen {

/// Removes from `pipeline`'s lowered code Halide's checks of its buffer arguments that the runtime
/// makes before every call, so that the kernel does not repeat them: a buffer is given, has the
/// description's type and rank, extents that are not negative and span at most 2^31 elements, a
/// contiguous innermost dimension, the heads and head dims the description fixes, the log-sum-exp's
/// (B, H, Lq), and host memory when it has elements. Kept: the checks that the pipeline reads no element outside its inputs and writes none
/// outside its scratch, and every allocation's check (size, failure), so a failure is still an
/// error, never a crash. Only for code that the runtime calls; the JIT tests keep every check.
void leave_argument_checks_to_runtime(Halide::Pipeline& pipeline);

}  // namespace attngen::codegen
