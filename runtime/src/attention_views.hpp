#pragma once
// Where an attention call's arguments are in attngen::attention_args (and attngen_attention_args,
// whose members have the same names): one mapping from the argument schema's slots
// (attngen/arguments.hpp) to the struct's members, shared by validation, the typed call, the C API
// and the buffers a kernel is called with.

#include "attngen/arguments.hpp"
#include "attngen/runtime/attention_call.hpp"

namespace attngen::detail {

// The view `args` gives for `argument`; null for the captured scalars, which the call passes by
// value (attention_args::scalars) and the runtime turns into the kernel's vector.
template <typename Args>  // attention_args or its C struct, const or not
auto given_view(Args& args, const kernel_argument& argument) -> decltype(&args.q) {
  switch (argument.slot) {
    case argument_slot::q: return &args.q;
    case argument_slot::k: return &args.k;
    case argument_slot::v: return &args.v;
    case argument_slot::q_offsets: return &args.q_offsets;
    case argument_slot::k_scale: return &args.k_scale;
    case argument_slot::v_scale: return &args.v_scale;
    case argument_slot::page_table: return &args.page_table;
    case argument_slot::kv_lengths: return &args.kv_lengths;
    case argument_slot::positions: return &args.positions;
    case argument_slot::sinks: return &args.sinks;
    case argument_slot::mask: return &args.mask;
    case argument_slot::key_padding: return &args.key_padding;
    case argument_slot::capture: return &args.captures[argument.index];
    case argument_slot::scalars: return nullptr;
    case argument_slot::output: return &args.output;
    case argument_slot::lse: return &args.lse;
  }
  return nullptr;
}

}  // namespace attngen::detail
