#include "attngen/runtime/detail/kernel_bridge.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attention_views.hpp"
#include "call_context.hpp"
#include "caught_exception.hpp"
#include "gpu_call.hpp"
#include "module_parts.hpp"
#include "module_views.hpp"
#include "tensor_checks.hpp"
#include "visibility_table.hpp"

namespace attngen::detail {

namespace {

// The kernel's code for `device`, or device_not_generated naming the tensor that decided the device.
template <typename Entry>
status entry_for(device_kind device, const kernel_entries<Entry>& entries, const char* first_tensor, Entry& entry) {
  entry = device == device_kind::host ? entries.cpu : device == device_kind::cuda ? entries.cuda : entries.opencl;
  if (entry != nullptr) return {};
  return status(error_code::device_not_generated,
                std::string(first_tensor) + ": the call runs on " + name_of(device) +
                    ", for which this kernel has no code; generate it with a GPU target for " + name_of(device));
}

// A CPU kernel writes the log-sum-exp as its output's second value (codegen's
// blocking::lse_in_output): the (B, H, Lq) tensor seen with the output's dimensions, (B, Lq, H, Dv),
// the feature dimension stepping nowhere. GPU kernels take the tensor as it is.
tensor_view lse_beside_output(const tensor_view& lse, std::int64_t value_head_dim) {
  tensor_view view = lse;
  view.rank = 4;
  const std::int64_t shape[] = {lse.shape[0], lse.shape[2], lse.shape[1], value_head_dim};
  const std::int64_t strides[] = {lse.strides[0], lse.strides[2], lse.strides[1], 0};
  std::copy(std::begin(shape), std::end(shape), view.shape);
  std::copy(std::begin(strides), std::end(strides), view.strides);
  return view;
}

// The body of run_attention_kernel, which turns anything this throws into a status.
status run_attention_call(const attention_desc& desc, const attention_args& args, const attention_entries& entries,
                          const visibility_entry& visibility) {
  if (status s = validate(desc, args); !s) return s;
  const device_kind device = device_of_call(args.q, args.gpu);
  generated_entry entry = nullptr;
  if (status s = entry_for(device, entries, "q", entry); !s) return s;
  const std::int64_t batch = args.q.shape[0], queries = args.q.shape[1], keys = args.k.shape[1];
  if (batch == 0 || queries == 0) return {};

  // Captured scalars reach the kernel as one float buffer (on a GPU, copied to the device).
  const tensor_view scalars = desc.captures.scalar_count == 0
                                  ? tensor_view{}
                                  : make_tensor(args.scalars, {std::int64_t(desc.captures.scalar_count)});
  const tensor_view lse = desc.lse_output && device == device_kind::host
                              ? lse_beside_output(args.lse, desc.effective_v_head_dim())
                              : args.lse;
  call_context context = context_for(device, args.gpu);
  gpu_call gpu(context, device);
  if (keys == 0) {
    // No keys: every row is fully masked, which the documented semantics define as 0 and -inf.
    if (status s = gpu.fill(args.output, 0.0f); !s) return s;
    if (desc.lse_output) return gpu.fill(args.lse, -std::numeric_limits<float>::infinity());
    return {};
  }
  std::vector<std::uint8_t> table_bytes;
  tensor_view table;
  if (device == device_kind::host)
    if (status s = compute_visibility_table(desc, visibility, args, scalars, context, gpu, table_bytes, table); !s) return s;
  // The kernel's buffers: its arguments in the schema's order (attngen/arguments.hpp), the
  // visibility table after the inputs (an empty view, skipped, where the variant takes none).
  const attention_argument_table arguments = kernel_arguments(desc);
  const int first_output = arguments.first_output() + 1;
  static const tensor_view none;
  const tensor_view* views[attention_slot_count + 1];
  std::fill(std::begin(views), std::end(views), &none);
  for (int n = 0, buffer = 0; n < arguments.size(); ++n) {
    if (n == first_output - 1) views[buffer++] = &table;
    const argument_slot slot = arguments[n].slot;
    views[buffer++] = slot == argument_slot::scalars ? &scalars : slot == argument_slot::lse ? &lse
                                                                                           : given_view(args, arguments[n]);
  }

  kernel_buffers<int(std::size(views))> buffers;
  if (status s = buffers.attach(gpu, views, first_output, device != device_kind::host); !s) return s;
  int result = entry(&context, buffers.data());
  if (result == 0) result = gpu.copy_outputs_back();
  return finish_call(context, result);
}

// The body of run_module_kernel, which turns anything this throws into a status.
status run_module_call(const mha_desc& desc, const mha_args& args, const module_entries& entries) {
  if (status s = validate(desc, args); !s) return s;
  const device_kind device = device_of_call(args.query, args.gpu);
  generated_module_entry gpu_entry = nullptr;
  if (device != device_kind::host) {
    const kernel_entries<generated_module_entry> gpu_entries{nullptr, entries.cuda, entries.opencl};
    if (status s = entry_for(device, gpu_entries, "query", gpu_entry); !s) return s;
  }
  const module_lengths lengths = lengths_of(args, desc);
  if (lengths.batch == 0 || lengths.queries == 0) return {};

  call_context context = context_for(device, args.gpu);
  gpu_call gpu(context, device);
  if (lengths.keys == 0) {
    // No keys: every query is fully masked, its attention 0, its output the output projection's bias.
    return gpu.fill_rows(args.output, args.weights.out_bias);
  }
  if (device == device_kind::host) return run_module_parts(desc, args, entries.cpu, lengths, context, gpu);
  // The GPU pipeline takes S from the key tensor and reads its rows for the appended keys too.
  if (lengths.keys == desc.extra_keys())
    return status(error_code::wrong_shape,
                  "key: no input keys (S = 0) with appended keys (add_bias_kv, add_zero_attn) runs on the CPU "
                  "only; on a GPU give at least one key");

  // The whole module's buffers: its arguments in the schema's order (attngen/module_arguments.hpp).
  const module_argument_table arguments = kernel_arguments(desc);
  static const tensor_view none;
  const tensor_view* views[module_slot_count];
  std::fill(std::begin(views), std::end(views), &none);
  for (int n = 0; n < arguments.size(); ++n) views[n] = given_view(args, arguments[n]);
  kernel_buffers<module_slot_count> buffers;
  if (status s = buffers.attach(gpu, views, arguments.first_output(), true); !s) return s;
  int result = gpu_entry(&context, buffers.data(), args.training, args.seed);
  if (result == 0) result = gpu.copy_outputs_back();
  return finish_call(context, result);
}

}  // namespace

status run_attention_kernel(const attention_desc& desc, const attention_args& args, const attention_entries& entries,
                            const visibility_entry& visibility) noexcept {
  try {
    return run_attention_call(desc, args, entries, visibility);
  } catch (...) {
    return status_of_caught_exception("running the attention kernel");
  }
}

status run_module_kernel(const mha_desc& desc, const mha_args& args, const module_entries& entries) noexcept {
  try {
    return run_module_call(desc, args, entries);
  } catch (...) {
    return status_of_caught_exception("running the module kernel");
  }
}

kernel_variant variant_for(const mha_args& args, const mha_desc& desc, int short_queries_per_tile) {
  const tensor_view& key = desc.self_attn ? args.query : args.key;
  if (args.query.rank != 3 || key.rank != 3) return kernel_variant::general;
  const module_lengths lengths = lengths_of(args, desc);
  return choose_module_variant(lengths.queries, lengths.keys, desc.num_heads / desc.effective_kv_heads(),
                               desc.is_causal(), short_queries_per_tile, desc.self_attn);
}

kernel_variant variant_for(const attention_args& args, const attention_desc& desc, int short_queries_per_tile) {
  if (args.q.rank != 4 || args.k.rank != 4) return kernel_variant::general;
  return choose_variant(args.q.shape[1], args.k.shape[1], desc.group_size(), desc.is_causal(),
                        short_queries_per_tile);
}

status finish_call(call_context& context, int result, const char* what) {
  while (!context.error.empty() && context.error.back() == '\n') context.error.pop_back();
  if (result != 0)
    return status(error_code::kernel_failed,
                  std::string(what) + ": " +
                      (context.error.empty() ? "failed with Halide error " + std::to_string(result) : context.error));
  return {};
}

}  // namespace attngen::detail

namespace attngen {

void set_num_threads(int threads) { halide_set_num_threads(threads); }

}  // namespace attngen

// Replaces the Halide runtime's default error handler (which prints and aborts) for every kernel of
// the process: the message goes to the call context of the kernel call that raised it.
extern "C" void halide_error(void* user_context, const char* message) {
  if (user_context != nullptr) {
    // Nothing may throw through the kernel's code: out of memory for the message, the call reports
    // the Halide error code alone (finish_call).
    try {
      static_cast<attngen::detail::call_context*>(user_context)->error += message;
    } catch (...) {
    }
    return;
  }
  // Only code that is not an attngen kernel call reaches here (no context to report to).
  std::fputs(message, stderr);
}
