#pragma once
/// A test's copy of a host tensor in GPU memory, allocated and filled through the Halide runtime the
/// kernels use (so the app-owned device memory a kernel call wraps is real driver memory).

#include "HalideRuntime.h"
#include "attngen/runtime.hpp"

namespace attngen::testing {

class device_tensor {
 public:
  /// Allocates a dense copy of `host` (dense) on `device` and copies its elements in.
  device_tensor(const tensor_view& host, device_kind device);
  ~device_tensor();
  device_tensor(const device_tensor&) = delete;
  device_tensor& operator=(const device_tensor&) = delete;

  /// False when allocating or copying failed (`error()` says why).
  bool ok() const { return ok_; }
  const char* error() const { return ok_ ? "" : "device allocation or copy failed"; }
  /// The view a kernel call takes: the device handle, with the host view's shape and strides.
  tensor_view view() const { return device_view_; }
  /// Copies the device elements back over the host tensor given at construction.
  bool copy_back();

 private:
  halide_buffer_t buffer_ = {};
  halide_dimension_t dims_[tensor_view::max_rank] = {};
  tensor_view device_view_;
  bool ok_ = false;
};

}  // namespace attngen::testing
