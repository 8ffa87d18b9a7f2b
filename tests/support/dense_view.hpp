#pragma once
/// Dense row-major views of test storage, for shapes known only at run time.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attngen/runtime/detail/dense_layout.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen::testing {

/// A dense row-major view of `data` with `shape` (outermost first), laid out as make_tensor lays it.
inline tensor_view dense_view(const void* data, dtype type, const std::vector<std::int64_t>& shape) {
  tensor_view t;
  t.data = const_cast<void*>(data);
  t.type = type;
  t.rank = int(shape.size());
  std::copy(shape.begin(), shape.end(), t.shape);
  attngen::detail::dense_strides(t.shape, t.rank, t.strides);
  return t;
}

/// The same for a shape of other integer extents (a template, so that braced shapes take the above).
template <typename Extent>
tensor_view dense_view(const void* data, dtype type, const std::vector<Extent>& shape) {
  return dense_view(data, type, std::vector<std::int64_t>(shape.begin(), shape.end()));
}

}  // namespace attngen::testing
