#include "gpu/device_tensor.hpp"

#include "HalideRuntimeCuda.h"
#include "HalideRuntimeOpenCL.h"

namespace attngen::testing {

device_tensor::device_tensor(const tensor_view& host, device_kind device) : device_view_(host) {
  const halide_device_interface_t* interface =
      device == device_kind::cuda ? halide_cuda_device_interface() : halide_opencl_device_interface();
  buffer_.host = static_cast<std::uint8_t*>(host.data);
  buffer_.type = halide_type_t(halide_type_uint, std::uint8_t(8 * size_of(host.type)));
  buffer_.dimensions = host.rank;
  buffer_.dim = dims_;
  for (int d = 0; d < host.rank; ++d) {
    const int from = host.rank - 1 - d;
    dims_[d] = {0, std::int32_t(host.shape[from]), std::int32_t(host.strides[from]), 0};
  }
  buffer_.flags = halide_buffer_flag_host_dirty;
  ok_ = halide_copy_to_device(nullptr, &buffer_, interface) == 0;
  if (!ok_) return;
  const std::uint64_t handle = device == device_kind::cuda ? halide_cuda_get_device_ptr(nullptr, &buffer_)
                                                           : halide_opencl_get_cl_mem(nullptr, &buffer_);
  device_view_.data = reinterpret_cast<void*>(handle);
  device_view_.device = device;
}

device_tensor::~device_tensor() { halide_device_free(nullptr, &buffer_); }

bool device_tensor::copy_back() {
  buffer_.flags = halide_buffer_flag_device_dirty;
  return halide_copy_to_host(nullptr, &buffer_) == 0;
}

}  // namespace attngen::testing
