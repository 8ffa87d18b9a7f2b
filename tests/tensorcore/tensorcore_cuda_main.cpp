// Entry point of tensorcore_cuda_tests: runs the suite where a CUDA device of compute capability 8.0
// or later (mma.sync m16n8k16 with bf16, cp.async) is present, and otherwise says why and exits with
// 77, which ctest reports as skipped.
#include <cuda_runtime.h>

#include <cstdio>

#include "catch_session.hpp"

int main(int argc, char** argv) {
  int devices = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&devices); error != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", error != cudaSuccess ? cudaGetErrorString(error) : "none found");
    return 77;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  if (properties.major < 8) {
    std::printf("skipped: %s is compute capability %d.%d; the tensor-core path needs 8.0 or later\n", properties.name,
                properties.major, properties.minor);
    return 77;
  }
  std::printf("device: %s, compute capability %d.%d\n", properties.name, properties.major, properties.minor);
  return attngen::testing::run_test_session(argc, argv);
}
