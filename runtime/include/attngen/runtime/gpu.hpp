#pragma once
/// How a kernel call uses a GPU.
///
/// A call runs where its tensors are: all on the host runs the CPU code; all on a CUDA (or OpenCL)
/// device runs the kernel's CUDA (OpenCL) code on them in place: attngen wraps the app's device
/// memory and never copies it to the host. Mixing devices in one call is an error
/// (error_code::wrong_device), and so is a device the kernel was not generated for
/// (error_code::device_not_generated: see the generated struct's `gpu_targets`).
///
/// Host tensors can still run on the GPU, when asked: `run_host_tensors_on` copies every input to
/// the device before the call and the outputs back after it, on every call, and frees the device
/// copies. That is for trying a GPU kernel; an app that calls repeatedly keeps its tensors on the
/// device.
///
/// CUDA: the kernel runs in `cuda_context` (a CUcontext), or, when null, in the context Halide's
/// runtime creates on first use (device 0, or the device with most multiprocessors); apps that use
/// CUDA themselves (PyTorch included) pass their own, e.g. the one cuCtxGetCurrent() returns after
/// they initialised CUDA. The kernel is enqueued on `cuda_stream` (a CUstream; null is the legacy
/// default stream) and the call returns without waiting for device outputs: synchronise the stream
/// before reading them, as after any kernel. With host tensors the call waits for the copies back.

#include "attngen/runtime/tensor.hpp"

namespace attngen {

struct gpu_options {
  /// device_kind::cuda or device_kind::opencl runs calls with host tensors on that device, copying
  /// them in and out; host (the default) runs them on the CPU.
  device_kind run_host_tensors_on = device_kind::host;
  void* cuda_context = nullptr;  ///< CUcontext, or null (see above)
  void* cuda_stream = nullptr;   ///< CUstream, or null for the default stream
};

}  // namespace attngen
