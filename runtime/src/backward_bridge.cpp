// The backward pass's call: validation against the backward schema, then the generated function for
// where the tensors are, on their Halide buffers.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "argument_checks.hpp"
#include "attngen/runtime/attention_backward_call.hpp"
#include "attngen/runtime/detail/kernel_bridge.hpp"
#include "attngen/runtime/detail/thread_pool.hpp"
#include "attngen/runtime/detail/variants.hpp"
#include "backward_views.hpp"
#include "call_context.hpp"
#include "caught_exception.hpp"
#include "gpu_call.hpp"

namespace attngen {

status validate(const attention_desc& desc, const attention_backward_args& args) {
  if (!desc.backward)
    return status(error_code::unexpected_tensor, "dq: the kernel's description has no backward pass: add .with_backward()");
  const backward_argument_table_type table = backward_argument_table(desc);
  std::vector<detail::checked_argument> arguments;
  arguments.reserve(std::size_t(table.size()));
  for (const backward_argument& argument : table)
    if (const tensor_view* view = detail::given_view(args, argument)) arguments.push_back(detail::checked(argument, *view));
  return detail::check_arguments(arguments);
}

namespace detail {

attention_backward_args attention_backward_args_of(const attention_desc& desc, const tensor_view* tensors,
                                                   const float* scalars, const gpu_options& gpu) {
  attention_backward_args args;
  args.gpu = gpu;
  for (const backward_argument& argument : backward_arguments(desc))
    if (tensor_view* view = given_view(args, argument)) *view = *tensors++;
  for (int s = 0; s < desc.captures.scalar_count; ++s) args.scalars[s] = scalars[s];
  return args;
}

template <typename Entry>
kernel_entries<Entry> backward_entries<Entry>::for_tasks(std::int64_t tasks) const {
  const bool one_pass = choose_backward_passes(tasks, pool_threads()) == backward_passes::one;
  return {one_pass ? cpu_one_pass : cpu_two_passes, cuda, opencl};
}

template struct backward_entries<generated_entry>;
template struct backward_entries<generated_module_entry>;

namespace {

status run_backward_call(const attention_desc& desc, const attention_backward_args& args,
                         const backward_entries<generated_entry>& entries) {
  if (status s = validate(desc, args); !s) return s;
  const device_kind device = device_of_call(args.q, args.gpu);
  generated_entry entry = nullptr;
  if (status s = entry_for(device, entries.for_tasks(args.q.shape[0] * desc.effective_kv_heads()), "q", entry); !s)
    return s;
  call_context context = context_for(device, args.gpu);
  gpu_call gpu(context, device);
  const backward_argument_table_type arguments = backward_arguments(desc);
  const std::int64_t batch = args.q.shape[0], queries = args.q.shape[1], keys = args.k.shape[1];
  if (batch == 0 || queries == 0 || keys == 0) {
    // No query or no key: no score, so every gradient is 0.
    for (const backward_argument& argument : arguments)
      if (argument.is_output())
        if (status s = gpu.fill(*given_view(args, argument), 0.0f); !s) return s;
    return {};
  }
  // The kernel's buffers: its arguments in the schema's order, the captured scalars as one vector.
  const tensor_view scalars = desc.captures.scalar_count == 0
                                  ? tensor_view{}
                                  : make_tensor(args.scalars, {std::int64_t(desc.captures.scalar_count)});
  static const tensor_view none;
  const tensor_view* views[backward_slot_count];
  std::fill(std::begin(views), std::end(views), &none);
  for (int n = 0; n < arguments.size(); ++n) {
    const tensor_view* given = given_view(args, arguments[n]);
    views[n] = given != nullptr ? given : &scalars;
  }
  return run_on_buffers(
      context, gpu, device, views, arguments.first_output(),
      [&](halide_buffer_t* const* buffers) { return entry(&context, buffers); }, "the backward pass");
}

}  // namespace

status run_attention_backward(const attention_desc& desc, const attention_backward_args& args,
                              const backward_entries<generated_entry>& entries) noexcept {
  try {
    return run_backward_call(desc, args, entries);
  } catch (...) {
    return status_of_caught_exception("running the backward pass");
  }
}

}  // namespace detail

}  // namespace attngen
