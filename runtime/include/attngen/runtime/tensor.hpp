#pragma once
/// Tensor views: what the app passes to a kernel. A view does not own memory.

#include <cstdint>
#include <initializer_list>

#include "attngen/dtype.hpp"

namespace attngen {

/// Where a tensor's memory is.
enum class device_kind {
  host,    ///< `data` is a host pointer
  cuda,    ///< `data` is a CUDA device pointer (a CUdeviceptr, e.g. a PyTorch CUDA tensor's data_ptr())
  opencl,  ///< `data` is an OpenCL buffer (a cl_mem) holding the tensor from its first byte
};

/// A pointer with a shape and strides. Shape and strides are outermost first (PyTorch order), strides
/// in elements. Kernels require the innermost stride to be 1 and every stride to be positive.
struct tensor_view {
  static constexpr int max_rank = 4;

  void* data = nullptr;
  dtype type = dtype::f32;
  int rank = 0;
  std::int64_t shape[max_rank] = {};
  std::int64_t strides[max_rank] = {};
  /// Where `data` points. A kernel call runs where its tensors are (attngen/runtime/gpu.hpp).
  device_kind device = device_kind::host;
  /// Made from a const pointer: kernels read it and refuse it as an output (read_only_output).
  bool read_only = false;

  /// True when no tensor is given (the default).
  bool empty() const { return data == nullptr && rank == 0; }
};

/// A view of const memory (made from a const pointer): a tensor_view with read_only set, which a
/// typed kernel call does not take as an output (a compile error) and run(args) refuses as one.
struct const_tensor_view : tensor_view {};

/// A dense row-major view of `data`.
tensor_view make_tensor(void* data, dtype type, std::initializer_list<std::int64_t> shape);
const_tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape);
/// A view with explicit strides (in elements, outermost first).
tensor_view make_tensor(void* data, dtype type, std::initializer_list<std::int64_t> shape,
                        std::initializer_list<std::int64_t> strides);
const_tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape,
                              std::initializer_list<std::int64_t> strides);

/// The (B, L, H, D) view a kernel takes of a tensor stored (B, H, L, D), the layout PyTorch's
/// scaled_dot_product_attention uses: dense in that order, its strides permuted. `shape` is the
/// stored order: {B, H, L, D}.
tensor_view make_bhld_tensor(void* data, dtype type, std::initializer_list<std::int64_t> shape);
const_tensor_view make_bhld_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape);

/// The same view, of memory on `device`.
template <typename View>
View on_device(View view, device_kind device) {
  view.device = device;
  return view;
}

/// Dense float32 views.
inline tensor_view make_tensor(float* data, std::initializer_list<std::int64_t> shape) {
  return make_tensor(static_cast<void*>(data), dtype::f32, shape);
}
inline const_tensor_view make_tensor(const float* data, std::initializer_list<std::int64_t> shape) {
  return make_tensor(static_cast<const void*>(data), dtype::f32, shape);
}
/// Dense byte views (boolean masks).
inline tensor_view make_tensor(std::uint8_t* data, std::initializer_list<std::int64_t> shape) {
  return make_tensor(static_cast<void*>(data), dtype::u8, shape);
}
inline const_tensor_view make_tensor(const std::uint8_t* data, std::initializer_list<std::int64_t> shape) {
  return make_tensor(static_cast<const void*>(data), dtype::u8, shape);
}
inline const_tensor_view make_tensor(const bool* data, std::initializer_list<std::int64_t> shape) {
  static_assert(sizeof(bool) == 1, "boolean masks are one byte per element");
  return make_tensor(static_cast<const void*>(data), dtype::u8, shape);
}

/// A typed call's input parameter: any view, read only.
struct input_tensor {
  tensor_view view;
  input_tensor(const tensor_view& v) : view(v) {}
};

/// A typed call's output parameter: a view of writable memory. A view made from a const pointer
/// does not convert (the deleted constructor names the mistake at compile time).
struct output_tensor {
  tensor_view view;
  output_tensor(const tensor_view& v) : view(v) {}
  output_tensor(const const_tensor_view&) = delete;
};

}  // namespace attngen
