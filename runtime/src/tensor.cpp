#include "attngen/runtime/tensor.hpp"

#include "attngen/runtime/detail/dense_layout.hpp"

namespace attngen {

tensor_view make_tensor(void* data, dtype type, std::initializer_list<std::int64_t> shape) {
  tensor_view view;
  view.data = data;
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

tensor_view make_tensor(void* data, dtype type, std::initializer_list<std::int64_t> shape,
                        std::initializer_list<std::int64_t> strides) {
  tensor_view view = make_tensor(data, type, shape);
  int d = 0;
  for (std::int64_t stride : strides) {
    if (d == tensor_view::max_rank) break;
    view.strides[d++] = stride;
  }
  return view;
}

namespace {

// The one place a const pointer becomes the view's pointer: the view is marked read-only, and
// validation refuses it wherever a kernel would write.
const_tensor_view marked_read_only(const tensor_view& view) {
  const_tensor_view result;
  static_cast<tensor_view&>(result) = view;
  result.read_only = true;
  return result;
}

}  // namespace

const_tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape) {
  return marked_read_only(make_tensor(const_cast<void*>(data), type, shape));
}

const_tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape,
                              std::initializer_list<std::int64_t> strides) {
  return marked_read_only(make_tensor(const_cast<void*>(data), type, shape, strides));
}

tensor_view make_bhld_tensor(void* data, dtype type, std::initializer_list<std::int64_t> shape) {
  tensor_view stored = make_tensor(data, type, shape);
  if (stored.rank != 4) return stored;  // rejected as wrong rank
  tensor_view view = stored;
  for (const int d : {1, 2}) {
    view.shape[d] = stored.shape[3 - d];
    view.strides[d] = stored.strides[3 - d];
  }
  return view;
}

const_tensor_view make_bhld_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape) {
  return marked_read_only(make_bhld_tensor(const_cast<void*>(data), type, shape));
}

}  // namespace attngen
