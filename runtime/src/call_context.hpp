#pragma once
// The context every call into the Halide runtime passes as its user_context, so errors reach the
// call that raised them without any global state (see halide_error in kernel_bridge.cpp).

#include <string>

#include "attngen/runtime/status.hpp"

namespace attngen::detail {

struct call_context {
  std::string error;
  void* cuda_context = nullptr;  // the app's CUcontext, or null for Halide's own
  void* cuda_stream = nullptr;   // the app's CUstream, or null for the default stream
};

// The call's status from a Halide function's result and the errors it reported: kernel_failed with
// the message, prefixed by `what`.
status finish_call(call_context& context, int result, const char* what = "kernel");

}  // namespace attngen::detail
