#pragma once
// What a call does around its kernel to run where its tensors are: on a GPU, device tensors
// wrapped, host tensors copied in and out, outputs filled; and the Halide buffers of its views.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/runtime/gpu.hpp"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"
#include "call_context.hpp"
#include "halide_view.hpp"
#include "tensor_checks.hpp"

namespace attngen::detail {

// A dense host tensor of `t`'s shape and type, its elements zero bytes, stored in `bytes`.
tensor_view dense_host_like(const tensor_view& t, std::vector<std::uint8_t>& bytes);

// What a call on a GPU does around the kernel: device tensors are wrapped (never copied), host
// tensors are copied in before and out after, and everything is let go of afterwards. On the host
// it does nothing.
class gpu_call {
 public:
  gpu_call(call_context& context, device_kind device);
  gpu_call(const gpu_call&) = delete;
  gpu_call& operator=(const gpu_call&) = delete;
  // Detaches wrapped device tensors and frees the copies of host tensors.
  ~gpu_call();

  // Makes `view` (over `tensor`) usable by the kernel.
  status attach(halide_view& view, const tensor_view& tensor, bool is_output);

  int copy_outputs_back();

  // Writes `value` to every element of an output (any value for float32, else 0 or -inf), wherever it is.
  status fill(const tensor_view& t, float value);

  // Copies the elements of `from`, wherever it is, into the dense host tensor `to` of its shape.
  status read(const tensor_view& from, const tensor_view& to);

  // Copies `row` (a vector as long as the output's innermost dimension, or empty for zeros) into
  // every row of a rank-3 output, wherever either is.
  status fill_rows(const tensor_view& output, const tensor_view& row);

 private:
  // Copies the elements of `from` into `to`, one of them on the device and the other on the host.
  status transfer(const tensor_view& from, const tensor_view& to);

  call_context& context_;
  device_kind device_;
  const halide_device_interface_t* interface_ = nullptr;
  std::vector<halide_buffer_t*> wrapped_, copied_, host_outputs_;
};

// The Halide buffers of a call's views, in order, empty views skipped: each attached where the call
// runs (views from `first_output` on are outputs). Held here for the call's duration. With
// `batch_dims`, view n's dimension batch_dims[n] (outermost first; -1: none) starts at `batch`: a
// kernel call for one sequence of a batch (sequence_views.hpp).
template <int N>
class kernel_buffers {
 public:
  status attach(gpu_call& gpu, const tensor_view* const (&views)[N], int first_output, bool on_gpu,
                const int* batch_dims = nullptr, std::int64_t batch = 0) {
    for (int n = 0; n < N; ++n) {
      if (views[n]->empty()) continue;
      halide_view& view = held_[count_].emplace(*views[n], on_gpu);
      if (batch_dims != nullptr && batch_dims[n] >= 0)
        view.buffer.dim[views[n]->rank - 1 - batch_dims[n]].min = static_cast<std::int32_t>(batch);
      if (status s = gpu.attach(view, *views[n], n >= first_output); !s) return s;
      buffers_[count_++] = &view.buffer;
    }
    return {};
  }
  halide_buffer_t* const* data() const { return buffers_; }

 private:
  std::optional<halide_view> held_[N];
  halide_buffer_t* buffers_[N] = {};
  int count_ = 0;
};

// Attaches `views` where the call runs (those from `first_output` on are outputs), calls `entry` with
// their buffers, copies the outputs back from a GPU, and gives the status of the call of `what`.
template <int N, typename Entry>
status run_on_buffers(call_context& context, gpu_call& gpu, device_kind device, const tensor_view* const (&views)[N],
                      int first_output, Entry entry, const char* what) {
  kernel_buffers<N> buffers;
  if (status s = buffers.attach(gpu, views, first_output, device != device_kind::host); !s) return s;
  int result = entry(buffers.data());
  if (result == 0) result = gpu.copy_outputs_back();
  return finish_call(context, result, what);
}

// A call's context: on a GPU, with the app's CUDA context and stream when it gives them. Installs
// attngen's CPU dispatch (detail/cpu_dispatch.hpp) first.
call_context context_for(device_kind device, const gpu_options& gpu);

// Where a call runs: where its (validated, all on one device) tensors are, or where the options
// send host tensors.
device_kind device_of_call(const tensor_view& first_tensor, const gpu_options& gpu);

// The kernel's code for `device`, or device_not_generated naming the tensor that decided the device.
template <typename Entries, typename Entry>
status entry_for(device_kind device, const Entries& entries, const char* first_tensor, Entry& entry) {
  entry = device == device_kind::host ? entries.cpu : device == device_kind::cuda ? entries.cuda : entries.opencl;
  if (entry != nullptr) return {};
  return status(error_code::device_not_generated,
                std::string(first_tensor) + ": the call runs on " + name_of(device) +
                    ", for which this kernel has no code; generate it with a GPU target for " + name_of(device));
}

}  // namespace attngen::detail
