// The module kernel against PyTorch's nn.MultiheadAttention (float64), option by option and in
// combination, at awkward sizes, through the same codegen as AOT builds (Halide's JIT).

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>

#include "module/jit_module.hpp"
#include "module/module_compare.hpp"
#include "module/pytorch_reference.hpp"
#include "support/tolerance.hpp"

namespace attngen::testing {
namespace {

constexpr auto base = multihead_attention().embed_dim(24).heads(4);

struct sizes {
  int batch, query_length, key_length;
};
// Awkward lengths: single elements, primes that leave partial tiles and blocks, longer keys than queries.
constexpr sizes awkward[] = {{1, 1, 1}, {2, 5, 7}, {3, 17, 33}};

// All `problems` share one description.
void check_against_pytorch(const std::vector<module_problem>& problems, kernel_variant variant) {
  const auto references = pytorch_references(problems);
  jit_module kernel(problems.front().desc, variant);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    const module_problem& p = problems[n];
    const mha_desc& d = p.desc;
    INFO(p.name() << ", variant " << name_of(variant));
    const module_result result = kernel.run(p);
    const double tolerance = module_tolerance_for(p);
    std::string where;
    const double output_error = scaled_error(result.output, references[n].output, where);
    INFO("output " << where);
    CHECK(output_error <= tolerance);
    if (d.weights != weights_output::none) {
      const double weights_error = scaled_error(result.weights, references[n].weights, where);
      INFO("weights " << where);
      CHECK(weights_error <= tolerance);
    }
  }
}

void check_against_pytorch(const mha_desc& desc, kernel_variant variant = kernel_variant::general) {
  std::vector<module_problem> problems;
  std::uint32_t seed = 1;
  for (const sizes& s : awkward)
    problems.push_back(make_random_module_problem(desc, s.batch, s.query_length, s.key_length, seed++));
  check_against_pytorch(problems, variant);
}

}  // namespace

TEST_CASE("module defaults (bias, sequence-first) match PyTorch, E24 H4, lengths 1/1 5/7 17/33") {
  check_against_pytorch(base);
}

TEST_CASE("module without bias matches PyTorch, E24 H4") { check_against_pytorch(base.bias(false)); }

TEST_CASE("module with batch_first tensors matches PyTorch, E24 H4") { check_against_pytorch(base.batch_first(true)); }

TEST_CASE("module with kdim and vdim unlike embed_dim matches PyTorch, E24 H4 kdim10 vdim6") {
  check_against_pytorch(base.kdim(10).vdim(6));
}

TEST_CASE("module with self-attention matches PyTorch given query as key and value, E24 H4") {
  check_against_pytorch(base.self_attention(true));
  check_against_pytorch(base.self_attention(true).kv_heads(2).batch_first(true).need_weights(weights_output::averaged));
}

TEST_CASE("module with add_bias_kv matches PyTorch, E24 H4") { check_against_pytorch(base.add_bias_kv(true)); }

TEST_CASE("module with add_zero_attn matches PyTorch, E24 H4") { check_against_pytorch(base.add_zero_attn(true)); }

TEST_CASE("module with add_bias_kv and add_zero_attn matches PyTorch, E24 H4") {
  check_against_pytorch(base.add_bias_kv(true).add_zero_attn(true));
}

TEST_CASE("module with a boolean key_padding_mask (true = ignore) matches PyTorch, E24 H4") {
  check_against_pytorch(base.key_padding_mask(mask_kind::boolean));
}

TEST_CASE("module with a float key_padding_mask matches PyTorch, E24 H4") {
  check_against_pytorch(base.key_padding_mask(mask_kind::additive));
}

TEST_CASE("module with a boolean attn_mask matches PyTorch in every shape: (L,S), (B*H,L,S), (B,H,L,S)") {
  for (auto shape : {attn_mask_shape::l_s, attn_mask_shape::bh_l_s, attn_mask_shape::b_h_l_s})
    check_against_pytorch(base.attn_mask(mask_kind::boolean, shape));
}

TEST_CASE("module with a float attn_mask matches PyTorch in every shape: (L,S), (B*H,L,S), (B,H,L,S)") {
  for (auto shape : {attn_mask_shape::l_s, attn_mask_shape::bh_l_s, attn_mask_shape::b_h_l_s})
    check_against_pytorch(base.attn_mask(mask_kind::additive, shape));
}

TEST_CASE("module with causal masking matches PyTorch's triangular masks, both alignments, L <= S") {
  check_against_pytorch(base.causal(top_left));
  check_against_pytorch(base.causal(bottom_right));
}

TEST_CASE("module returns PyTorch's attention weights, per head and averaged over heads") {
  check_against_pytorch(base.need_weights(weights_output::per_head));
  check_against_pytorch(base.need_weights(weights_output::averaged));
}

TEST_CASE("module with kv heads matches PyTorch with each kv head's projection repeated, GQA H4/2 and MQA H4/1") {
  check_against_pytorch(base.kv_heads(2));
  check_against_pytorch(base.kv_heads(1));
}

TEST_CASE("module with dropout in an inference call matches PyTorch in eval mode, p 0.5") {
  check_against_pytorch(base.dropout(0.5f).need_weights(weights_output::per_head));
}

TEST_CASE("module with every option matches PyTorch in every kernel variant, E32 H8/2 kdim12 vdim20") {
  constexpr auto everything = multihead_attention()
                                  .embed_dim(32)
                                  .heads(8)
                                  .kv_heads(2)
                                  .kdim(12)
                                  .vdim(20)
                                  .add_bias_kv(true)
                                  .add_zero_attn(true)
                                  .batch_first(true)
                                  .causal(top_left)
                                  .key_padding_mask(mask_kind::boolean)
                                  .attn_mask(mask_kind::additive, attn_mask_shape::b_h_l_s)
                                  .need_weights(weights_output::averaged);
  for (int v = 0; v < kernel_variant_count; ++v) check_against_pytorch(everything, kernel_variant(v));
}

TEST_CASE("module with sequence-first tensors and another mix of options matches PyTorch, E24 H4/1 no bias") {
  constexpr auto mix = base.kv_heads(1)
                           .bias(false)
                           .add_zero_attn(true)
                           .causal(bottom_right)
                           .key_padding_mask(mask_kind::additive)
                           .attn_mask(mask_kind::boolean, attn_mask_shape::l_s)
                           .dropout(0.3f)
                           .need_weights(weights_output::per_head);
  check_against_pytorch(mix);
}

TEST_CASE("module in bf16 and f16 matches PyTorch within the type's rounding, E24 H4 causal with weights") {
  for (dtype t : {dtype::bf16, dtype::f16})
    check_against_pytorch(base.element(t).causal(bottom_right).need_weights(weights_output::per_head));
}

TEST_CASE("module query with every key masked outputs the output bias, where PyTorch 1.13 gives NaN") {
  const auto desc = base.batch_first(true).key_padding_mask(mask_kind::boolean).need_weights(weights_output::per_head);
  module_problem p = make_random_module_problem(desc, 2, 3, 5, 11);
  auto& padding = p.inputs.at("key_padding").values;
  std::fill(padding.begin() + 5, padding.end(), 1.0f);  // batch 1: every key is padding
  const module_reference reference = pytorch_references({p}).front();
  jit_module kernel(desc);
  const module_result r = kernel.run(p);
  const auto& out_bias = p.inputs.at("out_bias").values;
  const int E = desc.embed;
  for (int i = 0; i < p.query_length; ++i)
    for (int c = 0; c < E; ++c) {
      const std::size_t n = (std::size_t(1) * p.query_length + i) * E + c;
      CHECK(std::isnan(reference.output[n]));
      CHECK(r.output[n] == out_bias[c]);
    }
  for (std::size_t n = std::size_t(desc.num_heads) * p.query_length * p.key_length; n < r.weights.size(); ++n) {
    CHECK(std::isnan(reference.weights[n]));
    CHECK(r.weights[n] == 0.0f);
  }
}

}  // namespace attngen::testing
