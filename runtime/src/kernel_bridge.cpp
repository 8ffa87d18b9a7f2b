#include "attngen/runtime/detail/kernel_bridge.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attngen/runtime/detail/lse_layout.hpp"
#include "attngen/runtime/detail/scratch_memory.hpp"
#include "attngen/runtime/detail/thread_pool.hpp"
#include "attngen/runtime/detail/vector_decode.hpp"
#include "attention_views.hpp"
#include "call_context.hpp"
#include "caught_exception.hpp"
#include "gpu_call.hpp"
#include "module_parts.hpp"
#include "module_views.hpp"
#include "sequence_checks.hpp"
#include "tensorcore_driver.hpp"
#include "tensor_checks.hpp"
#include "visibility_table.hpp"

namespace attngen::detail {

namespace {

// Rows that see no key: output 0 and log-sum-exp -inf, or with sinks the head's sink logit (the
// sink is the row's whole denominator). `lse` is (batch, H, Lq).
status fill_rows_without_keys(const attention_desc& desc, gpu_call& gpu, const tensor_view& output,
                              const tensor_view& lse, const tensor_view& sinks) {
  if (status s = gpu.fill(output, 0.0f); !s) return s;
  if (!desc.lse_output) return {};
  if (!desc.has_sinks) return gpu.fill(lse, -std::numeric_limits<float>::infinity());
  std::vector<float> logits(std::size_t(desc.num_heads));
  if (status s = gpu.read(sinks, make_tensor(logits.data(), {std::int64_t(desc.num_heads)})); !s) return s;
  for (int h = 0; h < desc.num_heads; ++h) {
    tensor_view head = lse;
    head.data = static_cast<float*>(lse.data) + h * lse.strides[1];
    head.shape[1] = 1;
    if (status s = gpu.fill(head, logits[std::size_t(h)]); !s) return s;
  }
  return {};
}

// One kernel call over `views`, the views of kernel_arguments(desc) in its order; with `batch_dims`,
// a call for the one sequence `extents.first_batch` (sequence_views.hpp).
status call_kernel(const attention_desc& desc, const attention_args& args, const tensor_view* const* views,
                   const int* batch_dims, const call_extents& extents, const attention_kernel& kernel,
                   device_kind device, call_context& context) {
  const kernel_variant variant = choose_variant(extents.queries, extents.keys, desc.group_size(), desc.is_causal(),
                                                kernel.single_query_threshold);
  generated_entry entry = nullptr;
  const kernel_entries<generated_entry> entries{kernel.cpu_variants[int(variant)], kernel.cuda, kernel.opencl};
  if (status s = entry_for(device, entries, "q", entry); !s) return s;
  // Captured scalars reach the kernel as one float buffer (on a GPU, copied to the device).
  const tensor_view scalars = desc.captures.scalar_count == 0
                                  ? tensor_view{}
                                  : make_tensor(args.scalars, {std::int64_t(desc.captures.scalar_count)});
  gpu_call gpu(context, device);
  std::vector<std::uint8_t> table_bytes;
  tensor_view table;
  if (device == device_kind::host && kernel.visibility != nullptr)
    if (status s = compute_visibility_table(desc, kernel.visibility[int(variant)], args, scalars, extents, context, gpu,
                                            table_bytes, table);
        !s)
      return s;
  // The kernel's buffers: its arguments in the schema's order (attngen/arguments.hpp), the
  // visibility table after the inputs (an empty view, skipped, where the variant takes none).
  const attention_argument_table arguments = kernel_arguments(desc);
  const int first_output = arguments.first_output() + 1;
  static const tensor_view none;
  tensor_view lse;
  const tensor_view* buffers_views[attention_slot_count + 1];
  int buffer_batch_dims[attention_slot_count + 1];
  std::fill(std::begin(buffers_views), std::end(buffers_views), &none);
  std::fill(std::begin(buffer_batch_dims), std::end(buffer_batch_dims), -1);
  for (int n = 0, buffer = 0; n < arguments.size(); ++n) {
    if (n == first_output - 1) {
      buffer_batch_dims[buffer] = batch_dims != nullptr ? 0 : -1;
      buffers_views[buffer++] = &table;
    }
    const argument_slot slot = arguments[n].slot;
    if (batch_dims != nullptr) buffer_batch_dims[buffer] = batch_dims[n];
    if (slot == argument_slot::scalars) {
      buffers_views[buffer++] = &scalars;
    } else if (slot == argument_slot::lse && device == device_kind::host) {
      lse = lse_beside_output(*views[n], desc.effective_v_head_dim());
      buffers_views[buffer++] = &lse;
    } else {
      buffers_views[buffer++] = views[n];
    }
  }
  kernel_buffers<int(std::size(buffers_views))> buffers;
  if (status s = buffers.attach(gpu, buffers_views, first_output, device != device_kind::host,
                                batch_dims != nullptr ? buffer_batch_dims : nullptr, extents.first_batch);
      !s)
    return s;
  int result = entry(&context, buffers.data());
  if (result == 0) result = gpu.copy_outputs_back();
  return finish_call(context, result);
}

// A call whose sequences differ in length: one kernel call per sequence, on its views.
status run_sequences(const attention_desc& desc, const attention_args& args, const attention_kernel& kernel,
                     device_kind device, call_context& context) {
  if (status s = check_sequence_tensors(desc, args); !s) return s;
  // A cl_mem cannot be offset to a sequence's rows.
  if (device == device_kind::opencl && args.q.device == device_kind::opencl)
    return status(error_code::wrong_device,
                  "q: a call whose sequences differ in length runs per sequence on views into the tensors, which an "
                  "OpenCL buffer cannot give; pass host tensors (copied) or run on CUDA");
  // The tensor-core kernel takes the whole batch in one launch, each block reading its sequence's
  // lengths and pages.
  if (device == device_kind::cuda && kernel.tensorcore != nullptr)
    if (const auto launch = tensorcore_launch_of(desc, args, *kernel.tensorcore))
      return launch_tensorcore(*kernel.tensorcore, *launch, context);
  // Decoding takes the whole batch in one call on the CPU's vectors, where it can.
  if (device == device_kind::host)
    if (auto call = vector_decode_call_of(desc, args, current_cpu())) {
      run_vector_decoding(*call, current_cpu());
      return {};
    }
  const attention_argument_table arguments = kernel_arguments(desc);
  const std::int64_t sequences = sequence_count(desc, args);
  for (std::int64_t b = 0; b < sequences; ++b) {
    const sequence_extents sequence = sequence_of(desc, args, b);
    if (sequence.queries == 0) continue;
    sequence_view cut[attention_slot_count];
    const tensor_view* views[attention_slot_count];
    int batch_dims[attention_slot_count];
    for (int n = 0; n < arguments.size(); ++n) {
      static const tensor_view none;
      const tensor_view* given = given_view(args, arguments[n]);
      cut[n] = given != nullptr ? sequence_view_of(desc, arguments[n], *given, sequence) : sequence_view{none, -1};
      views[n] = &cut[n].view;
      batch_dims[n] = cut[n].batch_dim;
    }
    if (sequence.keys == 0) {
      gpu_call gpu(context, device);
      const tensor_view* lse = desc.lse_output ? views[arguments.size() - 1] : nullptr;
      if (status s = fill_rows_without_keys(desc, gpu, *views[arguments.first_output()], lse ? *lse : tensor_view{},
                                            args.sinks);
          !s)
        return s;
      continue;
    }
    const call_extents extents{1, b, sequence.queries, sequence.keys};
    if (status s = call_kernel(desc, args, views, batch_dims, extents, kernel, device, context); !s) return s;
  }
  return {};
}

// The body of run_attention_kernel, which turns anything this throws into a status.
status run_attention_call(const attention_desc& desc, const attention_args& args, const attention_kernel& kernel) {
  if (status s = validate(desc, args); !s) return s;
  const device_kind device = device_of_call(args.q, args.gpu);
  generated_entry entry = nullptr;
  const kernel_entries<generated_entry> entries{kernel.cpu_variants[0], kernel.cuda, kernel.opencl};
  if (status s = entry_for(device, entries, "q", entry); !s) return s;
  call_context context = context_for(device, args.gpu);
  if (desc.has_sequence_lengths()) return run_sequences(desc, args, kernel, device, context);
  const std::int64_t batch = args.q.shape[0], queries = args.q.shape[1], keys = args.k.shape[1];
  if (batch == 0 || queries == 0) return {};
  if (keys == 0) {
    // No keys: every row is fully masked, which the documented semantics define as 0 and -inf.
    gpu_call gpu(context, device);
    return fill_rows_without_keys(desc, gpu, args.output, args.lse, args.sinks);
  }
  if (device == device_kind::cuda && kernel.tensorcore != nullptr)
    if (const auto launch = tensorcore_launch_of(desc, args, *kernel.tensorcore))
      return launch_tensorcore(*kernel.tensorcore, *launch, context);
  if (device == device_kind::host)
    if (auto call = vector_decode_call_of(desc, args, current_cpu())) {
      run_vector_decoding(*call, current_cpu());
      return {};
    }
  if (device == device_kind::host && kernel.amx != nullptr)
    if (auto call = amx_call_of(desc, args, *kernel.amx, current_cpu(), pool_threads())) {
      run_amx(*kernel.amx, *call);
      return {};
    }
  const attention_argument_table arguments = kernel_arguments(desc);
  const tensor_view* views[attention_slot_count];
  for (int n = 0; n < arguments.size(); ++n) {
    static const tensor_view scalars_by_value;
    const tensor_view* given = given_view(args, arguments[n]);
    views[n] = given != nullptr ? given : &scalars_by_value;
  }
  return call_kernel(desc, args, views, nullptr, {batch, 0, queries, keys}, kernel, device, context);
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

status run_attention_kernel(const attention_desc& desc, const attention_args& args,
                            const attention_kernel& kernel) noexcept {
  try {
    return run_attention_call(desc, args, kernel);
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

kernel_variant variant_for(const mha_args& args, const mha_desc& desc, int single_query_threshold) {
  const tensor_view& key = desc.self_attn ? args.query : args.key;
  if (args.query.rank != 3 || key.rank != 3) return kernel_variant::general;
  const module_lengths lengths = lengths_of(args, desc);
  return choose_module_variant(lengths.queries, lengths.keys, desc.num_heads / desc.effective_kv_heads(),
                               desc.is_causal(), single_query_threshold, desc.self_attn);
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

void set_num_threads(int threads) { detail::set_pool_threads(threads); }

void release_cached_memory() { detail::release_scratch_cache(); }

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
