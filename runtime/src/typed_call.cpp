#include "attention_views.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "attngen/runtime/module_call.hpp"
#include "module_views.hpp"

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

mha_args mha_args_of(const mha_desc& desc, const tensor_view* tensors, const mha_weights& weights, bool training,
                     std::uint64_t seed, const gpu_options& gpu) {
  mha_args args;
  args.weights = weights;
  for (const module_argument& argument : kernel_arguments(desc))
    if (!is_weight(argument)) *given_view(args, argument) = *tensors++;
  args.training = training;
  args.seed = seed;
  args.gpu = gpu;
  return args;
}

}  // namespace attngen::detail
