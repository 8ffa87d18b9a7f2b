#pragma once
/// A device copy of a host tensor, in memory allocated through the Halide runtime that generated
/// kernels use. For trying GPU kernels on host data, for tests and for benchmarks: apps that already
/// own device memory (their own CUDA allocations, PyTorch tensors) put its pointers in tensor views.

#include "HalideRuntime.h"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

class device_tensor {
 public:
  /// Allocates memory on `device` (cuda or opencl) for `host`'s elements, laid out with its strides,
  /// and copies them in. `host` must outlive this object: copy_to_host() writes into it.
  device_tensor(const tensor_view& host, device_kind device);
  /// Frees the device memory.
  ~device_tensor();
  device_tensor(const device_tensor&) = delete;
  device_tensor& operator=(const device_tensor&) = delete;

  /// Ok, or why allocating or copying in failed (error_code::kernel_failed, with the driver's words;
  /// error_code::wrong_device when `device` is the host).
  const status& result() const { return result_; }
  /// The device copy as a kernel takes it: the host view's shape, strides and type, `data` the
  /// device handle (a CUdeviceptr or cl_mem), `device` set.
  tensor_view view() const { return device_view_; }
  /// Waits for the device's queued work, then copies the elements back into the host tensor.
  status copy_to_host();
  /// Waits until the device has finished the work queued on it (for timing).
  status synchronize();

 private:
  halide_buffer_t buffer_ = {};
  halide_dimension_t dims_[tensor_view::max_rank] = {};
  tensor_view device_view_;
  status result_;
};

}  // namespace attngen
