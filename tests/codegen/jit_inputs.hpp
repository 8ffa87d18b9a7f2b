#pragma once
/// A test problem's tensors as the Halide buffers the JIT-compiled pipelines take.

#include <vector>

#include "Halide.h"
#include "attngen/codegen/modifiers.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

/// A Halide buffer with dense row-major `shape` (outermost first) holding `values` in `element`.
Halide::Buffer<> to_buffer(dtype element, const std::vector<int>& shape, const std::vector<float>& values);

/// Sets `params` to the problem's captured tensors and scalars.
void set_captures(codegen::capture_params& params, const attention_problem& p);

}  // namespace attngen::testing
