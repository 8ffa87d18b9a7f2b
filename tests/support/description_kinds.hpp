#pragma once
/// One description of each kind the operator's argument list tells apart: every optional argument
/// alone, and all of them together. The suites that check that the parts of attngen see the same
/// arguments (tests/codegen/test_argument_schema.cpp, tests/kernels/test_typed_call.cpp) walk it.

#include <string>
#include <vector>

#include "attngen/attngen.hpp"

namespace attngen::testing {

struct description_kind {
  std::string name;
  attention_desc desc;
};

inline std::vector<description_kind> description_kinds() {
  using namespace attngen::mod;
  constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
  constexpr auto bias = tensor<capture_type::f32>("bias", dim::heads, dim::fixed(3));
  constexpr auto cap = scalar("cap");
  const auto base = attention().heads(4).kv_heads(2).head_dim(16);
  return {
      {"plain", base},
      {"causal, v_head_dim 8, bf16", base.causal(bottom_right).v_head_dim(8).element(dtype::bf16)},
      {"mask (Lq, Lk)", base.additive_mask(mask_shape::lq_lk)},
      {"mask (H, Lq, Lk)", base.additive_mask(mask_shape::h_lq_lk)},
      {"mask (B, H, Lq, Lk)", base.additive_mask(mask_shape::b_h_lq_lk)},
      {"mask (B, 1, Lq, Lk)", base.additive_mask(mask_shape::b_1_lq_lk)},
      {"key padding", base.key_padding_mask(true_means_ignore)},
      {"lse", base.return_lse()},
      {"score_mod reading a tensor and a scalar",
       base.capture(bias).capture(cap).score_mod(score + bias(h, 1) * cap())},
      {"mask_mod reading a tensor (visibility table)", base.capture(document).mask_mod(document_mask(document))},
      {"every argument",
       base.additive_mask(mask_shape::b_1_lq_lk)
           .key_padding_mask(true_means_keep)
           .return_lse()
           .capture(document)
           .capture(bias)
           .capture(cap)
           .mask_mod(document_mask(document))
           .score_mod(score + bias(h, 0) * cap())},
  };
}

}  // namespace attngen::testing
