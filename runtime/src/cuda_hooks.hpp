#pragma once
// The hooks through which Halide's CUDA runtime runs a call in the app's CUDA context and stream
// (attngen/runtime/gpu.hpp).

namespace attngen::detail {

// Halide's CUDA runtime asks these for the context and stream of each call: the app's, when the
// call's options give them, else Halide's defaults. Installed once, before the first CUDA call.
void install_cuda_hooks();

}  // namespace attngen::detail
