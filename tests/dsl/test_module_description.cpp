// The module description language: PyTorch's defaults, derived sizes, validation rules and the
// documented dropout hash.
#include <catch2/catch.hpp>

#include "attngen/attngen.hpp"

using namespace attngen;

namespace {
constexpr auto encoder = multihead_attention().embed_dim(512).heads(8);
}

TEST_CASE("module defaults are PyTorch's: bias, sequence-first, no bias_kv, no zero attention, no dropout", "[dsl]") {
  STATIC_REQUIRE(encoder.projection_bias);
  STATIC_REQUIRE(!encoder.batch_major);
  STATIC_REQUIRE(!encoder.bias_kv);
  STATIC_REQUIRE(!encoder.zero_attn);
  STATIC_REQUIRE(!encoder.has_dropout());
  STATIC_REQUIRE(encoder.weights == weights_output::none);
}

TEST_CASE("module head_dim is embed_dim / heads, and kdim, vdim and kv_heads default to embed_dim and heads", "[dsl]") {
  STATIC_REQUIRE(encoder.head_dim() == 64);
  STATIC_REQUIRE(encoder.effective_kdim() == 512);
  STATIC_REQUIRE(encoder.effective_vdim() == 512);
  STATIC_REQUIRE(encoder.kv_embed() == 512);
  STATIC_REQUIRE(encoder.kv_heads(2).kv_embed() == 128);
}

TEST_CASE("module add_bias_kv and add_zero_attn each append one key", "[dsl]") {
  STATIC_REQUIRE(encoder.extra_keys() == 0);
  STATIC_REQUIRE(encoder.add_bias_kv(true).extra_keys() == 1);
  STATIC_REQUIRE(encoder.add_bias_kv(true).add_zero_attn(true).extra_keys() == 2);
}

TEST_CASE("module's attention operator has its heads, kv heads, head_dim and causality", "[dsl]") {
  constexpr auto op = encoder.kv_heads(2).causal(bottom_right).attention_operator();
  STATIC_REQUIRE(op == attention().heads(8).kv_heads(2).head_dim(64).causal(bottom_right));
}

TEST_CASE("each module rule names its problem at run time", "[dsl]") {
  CHECK(first_problem(multihead_attention().heads(8)) == "embed_dim is not set: call .embed_dim(n)");
  CHECK(first_problem(multihead_attention().embed_dim(64)) == "heads is not set: call .heads(n)");
  CHECK(first_problem(multihead_attention().embed_dim(100).heads(8)) ==
        "embed_dim must be divisible by heads (head_dim = embed_dim / heads)");
  CHECK(first_problem(multihead_attention().embed_dim(1026).heads(2)) ==
        "embed_dim / heads (the head dimension) must be at most 512");
  CHECK(first_problem(encoder.kv_heads(3)) ==
        "heads must be a multiple of kv_heads (each kv head serves heads/kv_heads query heads)");
  CHECK(first_problem(encoder.kdim(0)) == "kdim must be at least 1");
  CHECK(first_problem(encoder.vdim(-2)) == "vdim must be at least 1");
  CHECK(first_problem(encoder.self_attention(true).kdim(100)) ==
        "self_attention reads key and value from the query: kdim and vdim must equal embed_dim");
  CHECK(first_problem(encoder.dropout(-0.1f)) == "dropout must be in [0, 1): p = 1 would drop every weight");
  CHECK(first_problem(encoder.attn_mask(mask_kind::none, attn_mask_shape::l_s)) ==
        "attn_mask needs both a kind (boolean or additive) and a shape (l_s, bh_l_s or b_h_l_s)");
  CHECK(first_problem(encoder.element(dtype::u8)) ==
        "element type must be f32, f16 or bf16 (u8 is for boolean masks, i32 for captured tensors)");
  CHECK(is_valid(encoder.attn_mask(mask_kind::boolean, attn_mask_shape::bh_l_s)));
}

TEST_CASE("dropout bits depend on every index and the seed, and are a constant expression", "[dsl]") {
  constexpr auto bits = dropout_bits(42, 1, 2, 3, 4, 8);
  STATIC_REQUIRE(bits == dropout_bits(42, 1, 2, 3, 4, 8));
  CHECK(bits != dropout_bits(43, 1, 2, 3, 4, 8));
  CHECK(bits != dropout_bits(42, 0, 2, 3, 4, 8));
  CHECK(bits != dropout_bits(42, 1, 3, 3, 4, 8));
  CHECK(bits != dropout_bits(42, 1, 2, 4, 4, 8));
  CHECK(bits != dropout_bits(42, 1, 2, 3, 5, 8));
  CHECK(bits != dropout_bits(42 + (std::uint64_t(1) << 32), 1, 2, 3, 4, 8));
}

TEST_CASE("dropout threshold keeps a fraction 1 - p of uniform bits", "[dsl]") {
  STATIC_REQUIRE(dropout_threshold(0.0f) == 0);
  STATIC_REQUIRE(dropout_threshold(0.5f) == 0x80000000u);
  STATIC_REQUIRE(dropout_threshold(0.25f) == 0x40000000u);
}

TEST_CASE("module text form round-trips every option exactly", "[dsl]") {
  constexpr auto everything = multihead_attention()
                                  .embed_dim(96)
                                  .heads(6)
                                  .kv_heads(3)
                                  .kdim(40)
                                  .vdim(24)
                                  .bias(false)
                                  .add_bias_kv(true)
                                  .add_zero_attn(true)
                                  .batch_first(true)
                                  .dropout(0.1f)
                                  .need_weights(weights_output::averaged)
                                  .causal(bottom_right)
                                  .key_padding_mask(mask_kind::additive)
                                  .attn_mask(mask_kind::boolean, attn_mask_shape::bh_l_s)
                                  .element(dtype::bf16);
  for (const mha_desc& d : {encoder, everything, encoder.self_attention(true).kv_heads(4)}) {
    const auto parsed = parse_module_description(to_text(d));
    INFO(to_text(d));
    CHECK(parsed.error.empty());
    CHECK(parsed.desc == d);
    CHECK(is_module_text(to_text(d)));
  }
  CHECK_FALSE(is_module_text(to_text(attention().heads(2).head_dim(8))));
}

TEST_CASE("module text parse errors name the line and column", "[dsl]") {
  CHECK(parse_module_description("kind = module\nembed_dim = 64\nheads = 8\nbatch_first = maybe\n").error ==
        "line 4, column 15: bad value `maybe` for batch_first");
  CHECK(parse_module_description("kind = module\nembed = 64\n").error == "line 2, column 1: unknown key `embed`");
  CHECK(parse_module_description("heads = 8\n").error == "line 1, column 1: a module description starts with `kind = module`");
  CHECK(parse_module_description("kind = module\nembed_dim = 60\nheads = 8\n").error ==
        "embed_dim must be divisible by heads (head_dim = embed_dim / heads)");
}
