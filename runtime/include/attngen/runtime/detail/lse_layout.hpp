#pragma once
/// How a CPU kernel takes the log-sum-exp. Header-only: the runtime passes it so, and the JIT tests too.

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "attngen/runtime/tensor.hpp"

namespace attngen::detail {

/// A CPU kernel writes the log-sum-exp as its output's second value (codegen's
/// blocking::lse_in_output): the (B, H, Lq) tensor seen with the output's dimensions, (B, Lq, H, Dv),
/// the feature dimension stepping nowhere. GPU kernels take the tensor as it is.
inline tensor_view lse_beside_output(const tensor_view& lse, std::int64_t value_head_dim) {
  tensor_view view = lse;
  view.rank = 4;
  const std::int64_t shape[] = {lse.shape[0], lse.shape[2], lse.shape[1], value_head_dim};
  const std::int64_t strides[] = {lse.strides[0], lse.strides[2], lse.strides[1], 0};
  std::copy(std::begin(shape), std::end(shape), view.shape);
  std::copy(std::begin(strides), std::end(strides), view.strides);
  return view;
}

}  // namespace attngen::detail
