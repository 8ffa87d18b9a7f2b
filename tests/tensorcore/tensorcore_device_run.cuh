#pragma once
/// A generated tensor-core kernel (attngen tensorcore's NAME_tensorcore.cu) run on this machine's CUDA
/// device: the problem's arrays copied to device memory, one launch, the results copied back. For
/// nvcc.

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tensorcore/tensorcore_run.hpp"

namespace attngen::testing {

inline void cuda_check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

/// Device copies of the arrays a run places, freed with it.
class device_memory {
 public:
  device_memory() = default;
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  ~device_memory() {
    for (void* p : held_) cudaFree(p);
  }
  template <typename T>
  T* place(const std::vector<T>& values) {
    if (values.empty()) return nullptr;
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, values.size() * sizeof(T)), "cudaMalloc");
    held_.push_back(p);
    cuda_check(cudaMemcpy(p, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to device");
    return static_cast<T*>(p);
  }
  template <typename T>
  void read(const T* placed, std::vector<T>& into) {
    cuda_check(cudaMemcpy(into.data(), placed, into.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }

 private:
  std::vector<void*> held_;
};

/// Launches `kernel` for `params` and waits for it; a grid without blocks launches nothing.
template <typename Variant>
void launch_on_device(void (*kernel)(tensorcore::forward_params, Variant), const tensorcore::forward_params& params,
                      const Variant& variant) {
  constexpr unsigned shared_bytes = tensorcore::variant_tiles<Variant>::shared_bytes;
  const tensorcore::grid3 grid = tensorcore::forward_grid(params, tensorcore::variant_tiles<Variant>::rows);
  if (grid.x == 0 || grid.z == 0) return;
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)),
             "cudaFuncSetAttribute");
  kernel<<<dim3(grid.x, grid.y, grid.z), Variant::warps * 32, shared_bytes>>>(params, variant);
  cuda_check(cudaGetLastError(), "launch");
  cuda_check(cudaDeviceSynchronize(), "the kernel");
}

template <typename Variant>
tensorcore_result run_tensorcore_on_device(const attention_problem& p,
                                           void (*kernel)(tensorcore::forward_params, Variant)) {
  device_memory memory;
  return run_tensorcore<Variant>(p, memory, [kernel](const tensorcore::forward_params& params, const Variant& variant) {
    launch_on_device(kernel, params, variant);
  });
}

/// `batch` on the device, its keys split across `key_splits` blocks and merged by `merge` (1: not
/// split).
template <typename Variant>
void run_tensorcore_batch_on_device(sequence_batch& batch, void (*kernel)(tensorcore::forward_params, Variant),
                                    void (*merge)(tensorcore::forward_params, Variant), int key_splits) {
  device_memory memory;
  run_tensorcore_batch<Variant>(
      batch, memory,
      [kernel, merge](const tensorcore::forward_params& params, const Variant& variant) {
        launch_on_device(kernel, params, variant);
        if (tensorcore::splits_of(params) == 1) return;
        const tensorcore::grid3 grid = tensorcore::merge_grid(params, Variant::v_head_dim);
        if (grid.x == 0 || grid.z == 0) return;
        merge<<<dim3(grid.x, grid.y, grid.z), tensorcore::merge_threads>>>(params, variant);
        cuda_check(cudaGetLastError(), "launching the merge");
        cuda_check(cudaDeviceSynchronize(), "the merge");
      },
      key_splits);
}

}  // namespace attngen::testing
