#include "gpu/gpu_availability.hpp"

#include <dlfcn.h>

// The drivers are looked up as the Halide runtime loads them: by name, at run time.
namespace attngen::testing {

namespace {

std::string cuda_unavailable_reason() {
  void* driver = dlopen("libcuda.so", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return "no CUDA driver (libcuda.so) on this machine";
  using init_function = int (*)(unsigned);
  using count_function = int (*)(int*);
  auto init = reinterpret_cast<init_function>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<count_function>(dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  if (init == nullptr || count == nullptr || init(0) != 0 || count(&devices) != 0 || devices == 0)
    return "the CUDA driver reports no device";
  return "";
}

std::string opencl_unavailable_reason() {
  void* loader = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (loader == nullptr) loader = dlopen("libOpenCL.so", RTLD_LAZY | RTLD_LOCAL);
  if (loader == nullptr) return "no OpenCL loader (libOpenCL.so.1: install ocl-icd-libopencl1)";
  using platforms_function = int (*)(unsigned, void**, unsigned*);
  auto platforms = reinterpret_cast<platforms_function>(dlsym(loader, "clGetPlatformIDs"));
  unsigned count = 0;
  if (platforms == nullptr || platforms(0, nullptr, &count) != 0 || count == 0)
    return "no OpenCL platform (install pocl-opencl-icd to run OpenCL on the CPU)";
  return "";
}

}  // namespace

device_kind tested_device() { return ATTNGEN_TEST_GPU_DEVICE; }

backend tested_backend() { return tested_device() == device_kind::cuda ? backend::cuda : backend::opencl; }

std::string gpu_unavailable_reason() {
  return tested_device() == device_kind::cuda ? cuda_unavailable_reason() : opencl_unavailable_reason();
}

}  // namespace attngen::testing
