#pragma once
/// Dense row-major views of test storage, for shapes known only at run time.

#include <cstdint>
#include <vector>

#include "attngen/runtime/tensor.hpp"

namespace attngen::testing {

/// A dense row-major view of `data` with `shape` (outermost first); strides stay positive past an
/// empty dimension, as validation requires of every view.
inline tensor_view dense_view(const void* data, dtype type, const std::vector<std::int64_t>& shape) {
  tensor_view t;
  t.data = const_cast<void*>(data);
  t.type = type;
  t.rank = int(shape.size());
  std::int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.shape[d] = shape[d];
    t.strides[d] = stride;
    stride *= shape[d] > 0 ? shape[d] : 1;
  }
  return t;
}

/// The same for a shape of other integer extents (a template, so that braced shapes take the above).
template <typename Extent>
tensor_view dense_view(const void* data, dtype type, const std::vector<Extent>& shape) {
  return dense_view(data, type, std::vector<std::int64_t>(shape.begin(), shape.end()));
}

}  // namespace attngen::testing
