#pragma once
/// One module description of each kind the module's argument lists tell apart: every optional
/// input and output alone, the layouts and element types, and all of them together. The suite that
/// checks that the module's pipelines, wrapper and runtime see the same arguments
/// (tests/codegen/test_module_argument_schema.cpp) walks it.

#include <string>
#include <vector>

#include "attngen/module.hpp"

namespace attngen::testing {

struct module_description_kind {
  std::string name;
  mha_desc desc;
};

inline std::vector<module_description_kind> module_description_kinds() {
  const auto base = multihead_attention().embed_dim(32).heads(4);
  return {
      {"defaults", base},
      {"no bias", base.bias(false)},
      {"self-attention, batch_first", base.self_attention(true).batch_first(true)},
      {"add_bias_kv and add_zero_attn", base.add_bias_kv(true).add_zero_attn(true)},
      {"kv heads, kdim and vdim", base.kv_heads(2).kdim(12).vdim(20)},
      {"boolean key_padding_mask", base.key_padding_mask(mask_kind::boolean)},
      {"float attn_mask (L, S)", base.attn_mask(mask_kind::additive, attn_mask_shape::l_s)},
      {"boolean attn_mask (B x heads, L, S)", base.attn_mask(mask_kind::boolean, attn_mask_shape::bh_l_s)},
      {"float attn_mask (B, heads, L, S)", base.attn_mask(mask_kind::additive, attn_mask_shape::b_h_l_s)},
      {"weights per head", base.need_weights(weights_output::per_head)},
      {"averaged weights with dropout", base.need_weights(weights_output::averaged).dropout(0.25f)},
      {"bf16", base.element(dtype::bf16)},
      {"every option",
       base.kv_heads(2)
           .kdim(12)
           .vdim(20)
           .add_bias_kv(true)
           .add_zero_attn(true)
           .batch_first(true)
           .dropout(0.1f)
           .causal(causal_alignment::bottom_right)
           .key_padding_mask(mask_kind::additive)
           .attn_mask(mask_kind::boolean, attn_mask_shape::b_h_l_s)
           .need_weights(weights_output::averaged)
           .element(dtype::f16)},
  };
}

}  // namespace attngen::testing
