#include "attention_views.hpp"
#include "attngen/runtime/attention_call.hpp"

namespace attngen::detail {

attention_args attention_args_of(const attention_desc& desc, const tensor_view* tensors, const float* scalars,
                                 const gpu_options& gpu) {
  attention_args args;
  for (const kernel_argument& argument : kernel_arguments(desc))
    if (tensor_view* view = given_view(args, argument)) *view = *tensors++;
  for (int s = 0; s < desc.captures.scalar_count; ++s) args.scalars[s] = scalars[s];
  args.gpu = gpu;
  return args;
}

}  // namespace attngen::detail
