#include "attngen/runtime/tensor.hpp"

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
  std::int64_t stride = 1;
  // As PyTorch: an empty dimension does not make the outer strides 0.
  for (int d = view.rank - 1; d >= 0; --d) {
    view.strides[d] = stride;
    stride *= view.shape[d] > 0 ? view.shape[d] : 1;
  }
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
