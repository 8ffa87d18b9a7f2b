#include "tensorcore_driver.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda_hooks.hpp"

namespace attngen::detail {

namespace {

// The driver API's few types and functions the launch uses (cuda.h's, which the build does not need).
using cu_result = int;
using cu_context = void*;
using cu_module = void*;
using cu_function = void*;
using cu_stream = void*;
using cu_device_pointer = unsigned long long;
constexpr int cu_func_attribute_max_dynamic_shared_size_bytes = 8;
constexpr int cu_device_attribute_multiprocessor_count = 16;

struct cuda_driver {
  cu_result (*module_load_data)(cu_module*, const void*) = nullptr;
  cu_result (*module_get_function)(cu_function*, cu_module, const char*) = nullptr;
  cu_result (*func_set_attribute)(cu_function, int, int) = nullptr;
  cu_result (*launch_kernel)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             cu_stream, void**, void**) = nullptr;
  cu_result (*ctx_push_current)(cu_context) = nullptr;
  cu_result (*ctx_pop_current)(cu_context*) = nullptr;
  cu_result (*get_error_string)(cu_result, const char**) = nullptr;
  cu_result (*mem_alloc_async)(cu_device_pointer*, std::size_t, cu_stream) = nullptr;
  cu_result (*memcpy_to_device_async)(cu_device_pointer, const void*, std::size_t, cu_stream) = nullptr;
  cu_result (*mem_free_async)(cu_device_pointer, cu_stream) = nullptr;
  cu_result (*ctx_get_device)(int*) = nullptr;
  cu_result (*device_get_attribute)(int*, int, int) = nullptr;
  std::string missing;  // why the driver cannot be used; empty when it can
};

template <typename Function>
void bind(void* library, const char* name, Function& function, std::string& missing) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (function == nullptr && missing.empty()) missing = std::string("the CUDA driver has no ") + name;
}

const cuda_driver& driver() {
  static const cuda_driver loaded = [] {
    cuda_driver d;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      d.missing = "the CUDA driver (libcuda.so.1) could not be loaded";
      return d;
    }
    bind(library, "cuModuleLoadData", d.module_load_data, d.missing);
    bind(library, "cuModuleGetFunction", d.module_get_function, d.missing);
    bind(library, "cuFuncSetAttribute", d.func_set_attribute, d.missing);
    bind(library, "cuLaunchKernel", d.launch_kernel, d.missing);
    bind(library, "cuCtxPushCurrent_v2", d.ctx_push_current, d.missing);
    bind(library, "cuCtxPopCurrent_v2", d.ctx_pop_current, d.missing);
    bind(library, "cuGetErrorString", d.get_error_string, d.missing);
    bind(library, "cuMemAllocAsync", d.mem_alloc_async, d.missing);
    bind(library, "cuMemcpyHtoDAsync_v2", d.memcpy_to_device_async, d.missing);
    bind(library, "cuMemFreeAsync", d.mem_free_async, d.missing);
    bind(library, "cuCtxGetDevice", d.ctx_get_device, d.missing);
    bind(library, "cuDeviceGetAttribute", d.device_get_attribute, d.missing);
    return d;
  }();
  return loaded;
}

std::string error_text(const cuda_driver& d, cu_result result, const char* what) {
  const char* text = nullptr;
  if (d.get_error_string(result, &text) != 0 || text == nullptr) text = "unknown error";
  return std::string("tensor-core kernel: ") + what + ": " + text + " (CUDA error " + std::to_string(result) + ")";
}

// A kernel's functions in one context, and the multiprocessors of the context's device.
struct loaded_kernel {
  cu_function forward = nullptr, merge = nullptr;
  int multiprocessors = 1;
};

// Each (context, kernel) pair's functions, loaded once.
std::mutex loaded_kernels_lock;
std::map<std::pair<cu_context, const unsigned char*>, loaded_kernel> loaded_kernels;

cu_result kernel_in(const cuda_driver& d, cu_context context, const tensorcore_kernel& kernel, loaded_kernel& loaded,
                    const char*& failed) {
  std::lock_guard<std::mutex> lock(loaded_kernels_lock);
  const auto key = std::make_pair(context, kernel.fatbin);
  if (const auto found = loaded_kernels.find(key); found != loaded_kernels.end()) {
    loaded = found->second;
    return 0;
  }
  cu_module module = nullptr;
  cu_result result = d.module_load_data(&module, kernel.fatbin);
  if (result != 0) return failed = "loading its module", result;
  if ((result = d.module_get_function(&loaded.forward, module, kernel.function)) != 0)
    return failed = kernel.function, result;
  if ((result = d.module_get_function(&loaded.merge, module, kernel.merge_function)) != 0)
    return failed = kernel.merge_function, result;
  result =
      d.func_set_attribute(loaded.forward, cu_func_attribute_max_dynamic_shared_size_bytes, int(kernel.shared_bytes));
  if (result != 0) return failed = "asking for its shared memory", result;
  int device = 0;
  if ((result = d.ctx_get_device(&device)) != 0) return failed = "finding the context's device", result;
  result = d.device_get_attribute(&loaded.multiprocessors, cu_device_attribute_multiprocessor_count, device);
  if (result != 0) return failed = "counting the device's multiprocessors", result;
  loaded_kernels.emplace(key, loaded);
  return 0;
}

// A KV-cache layout's index tensors (host memory, attention_call.hpp) packed for one copy to the
// device: each array's place in `values`, -1 where the call has none; the page table's rows
// max_pages apart.
struct packed_layout {
  std::vector<std::int32_t> values;
  std::int64_t query_offsets = -1, kv_lengths = -1, page_table = -1;
  int max_pages = 0;
};

packed_layout pack_layout(const tensorcore::forward_params& p) {
  const tensorcore::sequence_layout& l = p.layout;
  packed_layout packed;
  auto append = [&](const std::int32_t* from, std::int64_t count) {
    const auto at = std::int64_t(packed.values.size());
    packed.values.insert(packed.values.end(), from, from + count);
    return at;
  };
  if (l.query_offsets != nullptr) packed.query_offsets = append(l.query_offsets, p.batch + 1);
  if (l.kv_lengths != nullptr) packed.kv_lengths = append(l.kv_lengths, p.batch);
  if (l.page_table != nullptr) {
    packed.max_pages = p.key_length >> l.page_size_log2;
    packed.page_table = std::int64_t(packed.values.size());
    for (int b = 0; b < p.batch; ++b) append(l.page_table + b * l.page_table_stride, packed.max_pages);
  }
  return packed;
}

// Launches `kernel` for `launch` on `stream`; a layout's index tensors go to the device first, in
// one block allocated and freed in the stream's order. A call with too few blocks to fill the device
// splits its keys across blocks (key_splits_for), into a workspace allocated and freed the same way,
// and merges them.
cu_result launch_on(const cuda_driver& d, const loaded_kernel& functions, const tensorcore_kernel& kernel,
                    const tensorcore_launch& launch, cu_stream stream, const char*& failed) {
  tensorcore::forward_params params = launch.params;
  tensorcore::variant_state variant = launch.variant;
  const packed_layout packed = pack_layout(params);
  cu_device_pointer indices = 0, workspace = 0;
  if (!packed.values.empty()) {
    const std::size_t bytes = packed.values.size() * sizeof(std::int32_t);
    failed = "allocating the sequences' index tensors";
    if (cu_result result = d.mem_alloc_async(&indices, bytes, stream); result != 0) return result;
    failed = "copying the sequences' index tensors";
    cu_result result = d.memcpy_to_device_async(indices, packed.values.data(), bytes, stream);
    if (result != 0) {
      d.mem_free_async(indices, stream);
      return result;
    }
    auto on_device = [&](std::int64_t at) {
      return at < 0 ? nullptr : reinterpret_cast<const std::int32_t*>(indices + at * sizeof(std::int32_t));
    };
    params.layout.query_offsets = on_device(packed.query_offsets);
    params.layout.kv_lengths = on_device(packed.kv_lengths);
    params.layout.page_table = on_device(packed.page_table);
    params.layout.page_table_stride = packed.max_pages;
  }
  params.key_splits = tensorcore::key_splits_for(
      params, kernel.block_rows, tensorcore::keys_per_tile(kernel.head_dim, kernel.v_head_dim), functions.multiprocessors);
  cu_result result = 0;
  if (params.key_splits > 1) {
    failed = "allocating the key splits' workspace";
    const auto bytes = std::size_t(tensorcore::split_workspace_floats(params, kernel.v_head_dim)) * sizeof(float);
    result = d.mem_alloc_async(&workspace, bytes, stream);
    params.partial = reinterpret_cast<float*>(workspace);
  }
  void* arguments[] = {&params, &variant};
  if (result == 0) {
    failed = "launching";
    const tensorcore::grid3 grid = tensorcore::forward_grid(params, kernel.block_rows);
    result = d.launch_kernel(functions.forward, unsigned(grid.x), unsigned(grid.y), unsigned(grid.z),
                             unsigned(kernel.threads), 1, 1, kernel.shared_bytes, stream, arguments, nullptr);
  }
  if (result == 0 && params.key_splits > 1) {
    failed = "launching the merge of the key splits";
    const tensorcore::grid3 grid = tensorcore::merge_grid(params, kernel.v_head_dim);
    result = d.launch_kernel(functions.merge, unsigned(grid.x), unsigned(grid.y), unsigned(grid.z),
                             unsigned(tensorcore::merge_threads), 1, 1, 0, stream, arguments, nullptr);
  }
  if (workspace != 0) d.mem_free_async(workspace, stream);
  if (indices != 0) d.mem_free_async(indices, stream);
  return result;
}

}  // namespace

status launch_tensorcore(const tensorcore_kernel& kernel, const tensorcore_launch& launch, call_context& context) {
  // No sequences, or none with queries: nothing to write.
  if (launch.grid.x == 0 || launch.grid.z == 0) return {};
  const cuda_driver& d = driver();
  if (!d.missing.empty()) return status(error_code::kernel_failed, d.missing);
  void* cuda_context = nullptr;
  void* stream = nullptr;
  if (acquire_cuda_context(&context, &cuda_context) != 0 || cuda_context == nullptr)
    return status(error_code::kernel_failed, "tensor-core kernel: no CUDA context");
  cu_result result = d.ctx_push_current(cuda_context);
  const char* failed = "making the call's context current";
  if (result == 0) {
    loaded_kernel functions;
    result = kernel_in(d, cuda_context, kernel, functions, failed);
    if (result == 0 && cuda_stream_of(&context, cuda_context, &stream) != 0) {
      release_cuda_context(&context);
      return status(error_code::kernel_failed, "tensor-core kernel: no CUDA stream");
    }
    if (result == 0) result = launch_on(d, functions, kernel, launch, stream, failed);
    cu_context popped = nullptr;
    d.ctx_pop_current(&popped);
  }
  release_cuda_context(&context);
  if (result != 0) return status(error_code::kernel_failed, error_text(d, result, failed));
  return {};
}

}  // namespace attngen::detail
