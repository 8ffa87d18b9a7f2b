#include "cuda_hooks.hpp"

#include <mutex>

#include "HalideRuntimeCuda.h"
#include "call_context.hpp"

namespace attngen::detail {

namespace {

// Halide's CUDA runtime asks these for the context and stream of each call: the app's, when the
// call's options give them, else Halide's defaults. Installed once, before the first CUDA call.
halide_cuda_acquire_context_t default_acquire_context = nullptr;
halide_cuda_release_context_t default_release_context = nullptr;
halide_cuda_get_stream_t default_get_stream = nullptr;

int acquire_context(void* user_context, void** cuda_context, bool create) {
  const auto* call = static_cast<const call_context*>(user_context);
  if (call != nullptr && call->cuda_context != nullptr) {
    *cuda_context = call->cuda_context;
    return 0;
  }
  return default_acquire_context(user_context, cuda_context, create);
}

int release_context(void* user_context) {
  const auto* call = static_cast<const call_context*>(user_context);
  if (call != nullptr && call->cuda_context != nullptr) return 0;
  return default_release_context(user_context);
}

int get_stream(void* user_context, void* cuda_context, void** stream) {
  const auto* call = static_cast<const call_context*>(user_context);
  if (call != nullptr && call->cuda_stream != nullptr) {
    *stream = call->cuda_stream;
    return 0;
  }
  return default_get_stream(user_context, cuda_context, stream);
}

}  // namespace

void install_cuda_hooks() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    default_acquire_context = halide_set_cuda_acquire_context(&acquire_context);
    default_release_context = halide_set_cuda_release_context(&release_context);
    default_get_stream = halide_set_cuda_get_stream(&get_stream);
  });
}

int acquire_cuda_context(call_context* call, void** cuda_context) {
  install_cuda_hooks();
  return acquire_context(call, cuda_context, true);
}

int release_cuda_context(call_context* call) {
  install_cuda_hooks();
  return release_context(call);
}

int cuda_stream_of(call_context* call, void* cuda_context, void** stream) {
  install_cuda_hooks();
  return get_stream(call, cuda_context, stream);
}

}  // namespace attngen::detail
