#pragma once
/// The row-major layout of a dense tensor, shared by make_tensor, the C API's attngen_dense_tensor,
/// DLPack imports, device staging and the tests' dense views.

#include <cstdint>

namespace attngen::detail {

/// Writes the row-major strides (in elements) of `shape` (`rank` extents, outermost first) to
/// `strides`. As in PyTorch, an empty dimension does not make the outer strides 0.
inline void dense_strides(const std::int64_t* shape, int rank, std::int64_t* strides) {
  std::int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d] > 0 ? shape[d] : 1;
  }
}

}  // namespace attngen::detail
