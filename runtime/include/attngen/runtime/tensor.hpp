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

  /// True when no tensor is given (the default).
  bool empty() const { return data == nullptr && rank == 0; }
};

/// A dense row-major view of `data`.
tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape);
/// A view with explicit strides (in elements, outermost first).
tensor_view make_tensor(const void* data, dtype type, std::initializer_list<std::int64_t> shape,
                        std::initializer_list<std::int64_t> strides);

/// The same view, of memory on `device`.
inline tensor_view on_device(tensor_view view, device_kind device) {
  view.device = device;
  return view;
}

/// Dense float32 view.
inline tensor_view make_tensor(const float* data, std::initializer_list<std::int64_t> shape) {
  return make_tensor(data, dtype::f32, shape);
}
/// Dense byte view (boolean masks).
inline tensor_view make_tensor(const std::uint8_t* data, std::initializer_list<std::int64_t> shape) {
  return make_tensor(data, dtype::u8, shape);
}
inline tensor_view make_tensor(const bool* data, std::initializer_list<std::int64_t> shape) {
  static_assert(sizeof(bool) == 1, "boolean masks are one byte per element");
  return make_tensor(data, dtype::u8, shape);
}

}  // namespace attngen
