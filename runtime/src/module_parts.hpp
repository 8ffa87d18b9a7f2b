#pragma once
// A module call on the host: its CPU parts run one after the other over float32 buffers allocated
// here (attngen::detail::module_cpu_parts).

#include <cstdint>

#include "attngen/runtime/detail/kernel_bridge.hpp"
#include "call_context.hpp"
#include "gpu_call.hpp"

namespace attngen::detail {

// B, L and the keys S' (appended ones included) of a module call whose query and key have rank 3.
struct module_lengths {
  std::int64_t batch, queries, keys;
};

template <typename Args>  // mha_args or mha_backward_args
module_lengths lengths_of(const Args& args, const mha_desc& desc) {
  const int sequence_dim = desc.batch_major ? 1 : 0;
  const tensor_view& key = desc.self_attn ? args.query : args.key;
  return {args.query.shape[desc.batch_major ? 0 : 1], args.query.shape[sequence_dim],
          key.shape[sequence_dim] + desc.extra_keys()};
}

// A host call of a module: its parts one after the other, over buffers allocated here.
status run_module_parts(const mha_desc& desc, const mha_args& args, const module_cpu_parts& parts,
                        const module_lengths& lengths, call_context& context, gpu_call& host);

}  // namespace attngen::detail
