#pragma once
// Where a backward call's arguments are in attngen::attention_backward_args: one mapping from the
// backward schema's slots (attngen/arguments.hpp) to the struct's members, shared by validation, the
// typed call and the buffers the kernel is called with.

#include "attngen/arguments.hpp"
#include "attngen/runtime/attention_backward_call.hpp"

namespace attngen::detail {

// The view `args` gives for `argument`; null for the captured scalars, passed by value.
template <typename Args>  // attention_backward_args, const or not
auto given_view(Args& args, const backward_argument& argument) -> decltype(&args.q) {
  switch (argument.slot) {
    case backward_slot::q: return &args.q;
    case backward_slot::k: return &args.k;
    case backward_slot::v: return &args.v;
    case backward_slot::sinks: return &args.sinks;
    case backward_slot::mask: return &args.mask;
    case backward_slot::key_padding: return &args.key_padding;
    case backward_slot::capture: return &args.captures[argument.index];
    case backward_slot::scalars: return nullptr;
    case backward_slot::output: return &args.output;
    case backward_slot::lse: return &args.lse;
    case backward_slot::d_output: return &args.d_output;
    case backward_slot::dq: return &args.dq;
    case backward_slot::dk: return &args.dk;
    case backward_slot::dv: return &args.dv;
    case backward_slot::d_sinks: return &args.d_sinks;
    case backward_slot::d_capture: return &args.d_captures[argument.index];
    case backward_slot::d_scalars: return &args.d_scalars;
  }
  return nullptr;
}

}  // namespace attngen::detail
