#pragma once
// Where a module call's arguments are in attngen::mha_args (and attngen_mha_args, whose members
// have the same names): one mapping from the module schema's slots (attngen/module_arguments.hpp) to
// the struct's members, shared by validation, the typed call, the C API and the buffers a kernel is
// called with.

#include "attngen/module_arguments.hpp"
#include "attngen/runtime/module_call.hpp"

namespace attngen::detail {

template <typename Args>
auto given_gradient_view(Args& args, const module_argument& argument) -> decltype(&args.query);

// The view `args` gives for `argument`; null for the buffers between the CPU parts, which are not
// the call's.
template <typename Args>  // mha_args, mha_backward_args or their C structs, const or not
auto given_view(Args& args, const module_argument& argument) -> decltype(&args.query) {
  switch (argument.slot) {
    case module_slot::query: return &args.query;
    case module_slot::key: return &args.key;
    case module_slot::value: return &args.value;
    case module_slot::q_weight: return &args.weights.q_weight;
    case module_slot::k_weight: return &args.weights.k_weight;
    case module_slot::v_weight: return &args.weights.v_weight;
    case module_slot::q_bias: return &args.weights.q_bias;
    case module_slot::k_bias: return &args.weights.k_bias;
    case module_slot::v_bias: return &args.weights.v_bias;
    case module_slot::bias_k: return &args.weights.bias_k;
    case module_slot::bias_v: return &args.weights.bias_v;
    case module_slot::out_weight: return &args.weights.out_weight;
    case module_slot::out_bias: return &args.weights.out_bias;
    case module_slot::key_padding_mask: return &args.key_padding_mask;
    case module_slot::attn_mask: return &args.attn_mask;
    case module_slot::output:
      if constexpr (requires { args.output; }) return &args.output;
      break;
    case module_slot::attn_weights:
      if constexpr (requires { args.attn_weights; }) return &args.attn_weights;
      break;
    case module_slot::x: case module_slot::weight: case module_slot::bias: case module_slot::linear_output:
    case module_slot::projected_q: case module_slot::keys: case module_slot::values:
    case module_slot::attention_result: break;
    default:
      if constexpr (requires { args.d_weights; }) return given_gradient_view(args, argument);
      break;
  }
  return nullptr;
}

// The view a backward call's `args` gives for one of the backward's own slots (d_output and the
// gradients).
template <typename Args>  // mha_backward_args or its C struct, const or not
auto given_gradient_view(Args& args, const module_argument& argument) -> decltype(&args.query) {
  switch (argument.slot) {
    case module_slot::d_output: return &args.d_output;
    case module_slot::d_query: return &args.d_query;
    case module_slot::d_key: return &args.d_key;
    case module_slot::d_value: return &args.d_value;
    case module_slot::d_q_weight: return &args.d_weights.q_weight;
    case module_slot::d_k_weight: return &args.d_weights.k_weight;
    case module_slot::d_v_weight: return &args.d_weights.v_weight;
    case module_slot::d_q_bias: return &args.d_weights.q_bias;
    case module_slot::d_k_bias: return &args.d_weights.k_bias;
    case module_slot::d_v_bias: return &args.d_weights.v_bias;
    case module_slot::d_bias_k: return &args.d_weights.bias_k;
    case module_slot::d_bias_v: return &args.d_weights.bias_v;
    case module_slot::d_out_weight: return &args.d_weights.out_weight;
    case module_slot::d_out_bias: return &args.d_weights.out_bias;
    default: break;
  }
  return nullptr;
}

}  // namespace attngen::detail
