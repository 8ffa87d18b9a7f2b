#include "gpu_call.hpp"

#include <cstring>

#include "HalideRuntimeCuda.h"
#include "HalideRuntimeOpenCL.h"
#include "attngen/runtime/detail/cpu_dispatch.hpp"
#include "attngen/runtime/detail/dense_layout.hpp"
#include "attngen/runtime/detail/scratch_memory.hpp"
#include "attngen/runtime/detail/thread_pool.hpp"
#include "cuda_hooks.hpp"

namespace attngen::detail {

namespace {

// Writes `value` to every element of a float view of any float dtype (only 0 and -inf are needed).
void fill(const tensor_view& t, float value) {
  const int size = size_of(t.type);
  std::uint8_t pattern[4];
  if (t.type == dtype::f32) std::memcpy(pattern, &value, 4);
  else if (value == 0.0f) std::memset(pattern, 0, 4);
  else {
    const std::uint16_t negative_infinity = t.type == dtype::bf16 ? 0xff80 : 0xfc00;
    std::memcpy(pattern, &negative_infinity, 2);
  }
  std::int64_t index[tensor_view::max_rank] = {};
  std::int64_t count = 1;
  for (int d = 0; d < t.rank; ++d) count *= t.shape[d];
  for (std::int64_t n = 0; n < count; ++n) {
    std::int64_t offset = 0;
    for (int d = 0; d < t.rank; ++d) offset += index[d] * t.strides[d];
    std::memcpy(static_cast<std::uint8_t*>(t.data) + offset * size, pattern, size);
    for (int d = t.rank - 1; d >= 0 && ++index[d] == t.shape[d]; --d) index[d] = 0;
  }
}

// Copies `row` (one element-type vector of `output`'s innermost extent) into every row of `output`.
void fill_rows(const tensor_view& output, const tensor_view& row) {
  const int size = size_of(output.type);
  const std::int64_t features = output.shape[output.rank - 1];
  for (std::int64_t outer = 0; outer < output.shape[0]; ++outer)
    for (std::int64_t inner = 0; inner < output.shape[1]; ++inner) {
      auto* target = static_cast<std::uint8_t*>(output.data) + (outer * output.strides[0] + inner * output.strides[1]) * size;
      for (std::int64_t c = 0; c < features; ++c) {
        if (row.empty()) std::memset(target + c * size, 0, size);
        else std::memcpy(target + c * size, static_cast<const std::uint8_t*>(row.data) + c * row.strides[0] * size, size);
      }
    }
}

}  // namespace

tensor_view dense_host_like(const tensor_view& t, std::vector<std::uint8_t>& bytes) {
  std::int64_t count = 1;
  for (int d = 0; d < t.rank; ++d) count *= t.shape[d];
  bytes.assign(std::size_t(count) * size_of(t.type), 0);
  tensor_view dense = t;
  dense.data = bytes.data();
  dense.device = device_kind::host;
  dense_strides(dense.shape, dense.rank, dense.strides);
  return dense;
}

gpu_call::gpu_call(call_context& context, device_kind device) : context_(context), device_(device) {
  if (device == device_kind::cuda) install_cuda_hooks();
  if (device != device_kind::host)
    interface_ = device == device_kind::cuda ? halide_cuda_device_interface() : halide_opencl_device_interface();
}

gpu_call::~gpu_call() {
  for (halide_buffer_t* buffer : wrapped_) halide_device_detach_native(&context_, buffer);
  for (halide_buffer_t* buffer : copied_) halide_device_free(&context_, buffer);
}

status gpu_call::attach(halide_view& view, const tensor_view& tensor, bool is_output) {
  if (interface_ == nullptr) return {};
  if (tensor.device == device_) {
    view.buffer.host = nullptr;
    const int result = halide_device_wrap_native(&context_, &view.buffer, reinterpret_cast<std::uint64_t>(tensor.data), interface_);
    if (result != 0) return finish_call(context_, result);
    wrapped_.push_back(&view.buffer);
  } else {
    if (!is_output) view.buffer.flags |= halide_buffer_flag_host_dirty;
    copied_.push_back(&view.buffer);
    if (is_output) host_outputs_.push_back(&view.buffer);
  }
  return {};
}

int gpu_call::copy_outputs_back() {
  for (halide_buffer_t* buffer : host_outputs_)
    if (int result = halide_copy_to_host(&context_, buffer); result != 0) return result;
  return 0;
}

status gpu_call::fill(const tensor_view& t, float value) {
  if (interface_ == nullptr || t.device == device_kind::host) {
    detail::fill(t, value);
    return {};
  }
  std::vector<std::uint8_t> host;
  const tensor_view staged = dense_host_like(t, host);
  detail::fill(staged, value);
  return transfer(staged, t);
}

status gpu_call::read(const tensor_view& from, const tensor_view& to) {
  if (interface_ == nullptr || from.device == device_kind::host) {
    std::int64_t index[tensor_view::max_rank] = {}, count = 1;
    for (int d = 0; d < from.rank; ++d) count *= from.shape[d];
    const int size = size_of(from.type);
    for (std::int64_t n = 0; n < count; ++n) {
      std::int64_t offset = 0;
      for (int d = 0; d < from.rank; ++d) offset += index[d] * from.strides[d];
      std::memcpy(static_cast<std::uint8_t*>(to.data) + n * size, static_cast<const std::uint8_t*>(from.data) + offset * size,
                  size);
      for (int d = from.rank - 1; d >= 0 && ++index[d] == from.shape[d]; --d) index[d] = 0;
    }
    return {};
  }
  return transfer(from, to);
}

status gpu_call::fill_rows(const tensor_view& output, const tensor_view& row) {
  if (interface_ == nullptr) {
    detail::fill_rows(output, row);
    return {};
  }
  std::vector<std::uint8_t> row_bytes, output_bytes;
  tensor_view host_row = row;
  if (!row.empty() && row.device != device_kind::host) {
    host_row = dense_host_like(row, row_bytes);
    if (status s = transfer(row, host_row); !s) return s;
  }
  const tensor_view staged = output.device == device_kind::host ? output : dense_host_like(output, output_bytes);
  detail::fill_rows(staged, host_row);
  return output.device == device_kind::host ? status() : transfer(staged, output);
}

status gpu_call::transfer(const tensor_view& from, const tensor_view& to) {
  halide_view source(from, true), target(to, true);
  halide_view& on_device = from.device == device_kind::host ? target : source;
  const tensor_view& device_tensor = from.device == device_kind::host ? to : from;
  on_device.buffer.host = nullptr;
  int result = halide_device_wrap_native(&context_, &on_device.buffer,
                                         reinterpret_cast<std::uint64_t>(device_tensor.data), interface_);
  if (result == 0) {
    result = halide_buffer_copy(&context_, &source.buffer, from.device == device_kind::host ? interface_ : nullptr,
                                &target.buffer);
    halide_device_detach_native(&context_, &on_device.buffer);
  }
  return finish_call(context_, result);
}

call_context context_for(device_kind device, const gpu_options& gpu) {
  install_cpu_dispatch();
  install_thread_pool();
  install_scratch_memory();
  call_context context;
  if (device != device_kind::host) {
    context.cuda_context = gpu.cuda_context;
    context.cuda_stream = gpu.cuda_stream;
  }
  return context;
}

device_kind device_of_call(const tensor_view& first_tensor, const gpu_options& gpu) {
  return first_tensor.device != device_kind::host ? first_tensor.device : gpu.run_host_tensors_on;
}

}  // namespace attngen::detail
