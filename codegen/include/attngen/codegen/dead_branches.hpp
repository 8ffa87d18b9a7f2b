#pragma once
/// A cleanup of Halide's lowered code that its simplifier leaves undone.

#include "Halide.h"

namespace attngen::codegen {

/// Removes from `pipeline`'s lowered code the else branches of tests that the enclosing loop decides:
/// `v < end`, `v + 1 <= end` or `v <= end - 1` inside `for v in [min, end)`, which always hold there.
/// Halide 14's simplifier cannot prove them when `end` is not a constant. Loop partitioning leaves
/// one per parallel loop whose body it partitions (for the guards compute_with puts on the fused
/// loops of the log-sum-exp), each else branch a dead copy of the whole tile body. kernel_pipeline
/// (kernel_pipeline.hpp) runs it for every kernel.
void drop_branches_loops_decide(Halide::Pipeline& pipeline);

}  // namespace attngen::codegen
