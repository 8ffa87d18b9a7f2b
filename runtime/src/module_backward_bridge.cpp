// A module's backward pass: validation against the module backward schema, then its one generated
// pipeline for where the tensors are, on their Halide buffers.
#include <algorithm>
#include <iterator>

#include "attngen/runtime/detail/kernel_bridge.hpp"
#include "call_context.hpp"
#include "caught_exception.hpp"
#include "gpu_call.hpp"
#include "module_parts.hpp"
#include "module_views.hpp"

namespace attngen::detail {

namespace {

status run_module_backward_call(const mha_desc& desc, const mha_backward_args& args,
                                const backward_entries<generated_module_entry>& entries) {
  if (status s = validate(desc, args); !s) return s;
  const device_kind device = device_of_call(args.query, args.gpu);
  const module_lengths lengths = lengths_of(args, desc);
  generated_module_entry entry = nullptr;
  if (status s = entry_for(device, entries.for_tasks(lengths.batch * desc.effective_kv_heads()), "query", entry); !s)
    return s;
  call_context context = context_for(device, args.gpu);
  gpu_call gpu(context, device);
  const module_argument_table arguments = module_backward_arguments(desc);
  if (lengths.batch == 0 || lengths.queries == 0) {
    // No output row: every gradient is 0.
    for (const module_argument& argument : arguments)
      if (argument.is_output())
        if (status s = gpu.fill(*given_view(args, argument), 0.0f); !s) return s;
    return {};
  }
  // The pipeline reads the key input's rows (for the appended keys too): it needs one.
  if (lengths.keys == desc.extra_keys())
    return status(error_code::wrong_shape, "key: no input keys (S = 0); the backward pass needs at least one key");
  static const tensor_view none;
  const tensor_view* views[module_argument_capacity];
  std::fill(std::begin(views), std::end(views), &none);
  for (int n = 0; n < arguments.size(); ++n) views[n] = given_view(args, arguments[n]);
  return run_on_buffers(
      context, gpu, device, views, arguments.first_output(),
      [&](halide_buffer_t* const* buffers) { return entry(&context, buffers, args.training, args.seed); },
      "the module's backward pass");
}

}  // namespace

status run_module_backward(const mha_desc& desc, const mha_backward_args& args,
                           const backward_entries<generated_module_entry>& entries) noexcept {
  try {
    return run_module_backward_call(desc, args, entries);
  } catch (...) {
    return status_of_caught_exception("running the module's backward pass");
  }
}

}  // namespace attngen::detail
