#include "attngen/runtime/tensor.hpp"

#include "dense_layout.hpp"

namespace attngen {

tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape) {
  tensor_view view;
  view.data = const_cast<void*>(data);
  view.type = type;
  view.rank = 0;
  for (std::int64_t extent : shape) {
    if (view.rank == tensor_view::max_rank) break;
    view.shape[view.rank++] = extent;
  }
  detail::dense_strides(view.shape, view.rank, view.strides);
  if (shape.size() > std::size_t(tensor_view::max_rank)) view.rank = int(shape.size());  // rejected as wrong rank
  return view;
}

tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape,
                        std::initializer_list<std::int64_t> strides) {
  tensor_view view = make_tensor(data, type, shape);
  int d = 0;
  for (std::int64_t stride : strides) {
    if (d == tensor_view::max_rank) break;
    view.strides[d++] = stride;
  }
  return view;
}

}  // namespace attngen
