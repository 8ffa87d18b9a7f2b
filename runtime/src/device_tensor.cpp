#include "attngen/runtime/device_tensor.hpp"

#include "HalideRuntimeCuda.h"
#include "HalideRuntimeOpenCL.h"
#include "call_context.hpp"

namespace attngen {

device_tensor::device_tensor(const tensor_view& host, device_kind device) : device_view_(host) {
  if (device == device_kind::host) {
    result_ = status(error_code::wrong_device, "device_tensor: the device must be cuda or opencl, not host");
    return;
  }
  const halide_device_interface_t* interface =
      device == device_kind::cuda ? halide_cuda_device_interface() : halide_opencl_device_interface();
  // The elements are copied as raw bits, whatever their type.
  buffer_.host = static_cast<std::uint8_t*>(host.data);
  buffer_.type = halide_type_t(halide_type_uint, std::uint8_t(8 * size_of(host.type)));
  buffer_.dimensions = host.rank;
  buffer_.dim = dims_;
  for (int d = 0; d < host.rank; ++d) {
    const int from = host.rank - 1 - d;
    dims_[d] = {0, std::int32_t(host.shape[from]), std::int32_t(host.strides[from]), 0};
  }
  buffer_.flags = halide_buffer_flag_host_dirty;
  detail::call_context context;
  result_ = detail::finish_call(context, halide_copy_to_device(&context, &buffer_, interface), "device_tensor");
  if (!result_) return;
  const std::uint64_t handle = device == device_kind::cuda ? halide_cuda_get_device_ptr(&context, &buffer_)
                                                           : halide_opencl_get_cl_mem(&context, &buffer_);
  device_view_.data = reinterpret_cast<void*>(handle);
  device_view_.device = device;
}

device_tensor::~device_tensor() {
  detail::call_context context;
  halide_device_free(&context, &buffer_);
}

status device_tensor::copy_to_host() {
  detail::call_context context;
  buffer_.flags = halide_buffer_flag_device_dirty;
  return detail::finish_call(context, halide_copy_to_host(&context, &buffer_), "device_tensor");
}

status device_tensor::synchronize() {
  detail::call_context context;
  return detail::finish_call(context, halide_device_sync(&context, &buffer_), "device_tensor");
}

}  // namespace attngen
