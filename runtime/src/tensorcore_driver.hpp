#pragma once
// Launching a tensor-core kernel through the CUDA driver (libcuda, loaded at the first launch as
// Halide's runtime loads it), in the call's CUDA context and stream.

#include "attngen/runtime/detail/tensorcore_launch.hpp"
#include "attngen/runtime/status.hpp"
#include "call_context.hpp"

namespace attngen::detail {

// Loads the kernel's fatbin into the context once (kept for the process), then enqueues the launch
// on the call's stream. A missing driver or a failed launch is error_code::kernel_failed with the
// driver's message.
status launch_tensorcore(const tensorcore_kernel& kernel, const tensorcore_launch& launch, call_context& context);

}  // namespace attngen::detail
