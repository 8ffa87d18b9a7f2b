#pragma once
// The hooks through which Halide's CUDA runtime runs a call in the app's CUDA context and stream
// (attngen/runtime/gpu.hpp).

#include "call_context.hpp"

namespace attngen::detail {

// Halide's CUDA runtime asks these for the context and stream of each call (and releases the
// context): the app's, when the call's options give them, else Halide's defaults. Installed once,
// before the first CUDA call.
void install_cuda_hooks();

// The call's CUDA context (the app's, or Halide's, created if need be) and stream, as Halide's
// runtime gets them for its own kernels; 0 on success. A context acquired is released after use.
int acquire_cuda_context(call_context* call, void** cuda_context);
int release_cuda_context(call_context* call);
int cuda_stream_of(call_context* call, void* cuda_context, void** stream);

}  // namespace attngen::detail
