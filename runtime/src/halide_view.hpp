#pragma once
// Tensor views as the Halide runtime takes them: halide_buffer_t over a view, its element type
// mapped to Halide's.

#include "HalideRuntime.h"
#include "attngen/runtime/tensor.hpp"

namespace attngen::detail {

// A halide_buffer_t over a tensor view: Halide's dimension 0 is the view's innermost dimension.
struct halide_view {
  halide_buffer_t buffer = {};
  halide_dimension_t dims[tensor_view::max_rank] = {};

  // GPU code takes bf16 as its bits: with `bfloat16_as_bits`, bf16 views are uint16 buffers.
  explicit halide_view(const tensor_view& t, bool bfloat16_as_bits = false);
  halide_view(const halide_view&) = delete;
  halide_view& operator=(const halide_view&) = delete;
};

}  // namespace attngen::detail
