// The text form carries descriptions from C++ to the generator: it must round-trip exactly and
// reject malformed input with the line named.
#include <catch2/catch.hpp>

#include "attngen/attngen.hpp"

using namespace attngen;

TEST_CASE("text form round-trips every field", "[dsl][text]") {
  const auto desc = attention()
                        .heads(12)
                        .kv_heads(4)
                        .head_dim(80)
                        .v_head_dim(48)
                        .causal(bottom_right)
                        .additive_mask(mask_shape::b_1_lq_lk)
                        .key_padding_mask(true_means_keep)
                        .scale(0.3f)
                        .return_lse()
                        .element(dtype::bf16);
  const auto parsed = parse_description(to_text(desc));
  REQUIRE(parsed.error.empty());
  // Defaults are written out explicitly, so compare through the effective values.
  CHECK(parsed.desc.num_heads == 12);
  CHECK(parsed.desc.effective_kv_heads() == 4);
  CHECK(parsed.desc.qk_head_dim == 80);
  CHECK(parsed.desc.effective_v_head_dim() == 48);
  CHECK(parsed.desc.causal_mode == causal_alignment::bottom_right);
  CHECK(parsed.desc.additive_mask_shape == mask_shape::b_1_lq_lk);
  CHECK(parsed.desc.key_padding == padding_polarity::true_means_keep);
  CHECK(parsed.desc.has_scale);
  CHECK(parsed.desc.scale_value == 0.3f);
  CHECK(parsed.desc.lse_output);
  CHECK(parsed.desc.element_type == dtype::bf16);
}

TEST_CASE("text form round-trips global positions", "[dsl][text][positions]") {
  const auto desc = attention().heads(4).head_dim(64).return_lse().with_global_positions();
  const auto parsed = parse_description(to_text(desc));
  REQUIRE(parsed.error.empty());
  CHECK(parsed.desc.global_positions);
  CHECK(!parse_description(to_text(attention().heads(4).head_dim(64))).desc.global_positions);
  CHECK(to_text(desc).find("positions = global") != std::string::npos);
}

TEST_CASE("text form accepts comments, blank lines and omitted defaults", "[dsl][text]") {
  const auto parsed = parse_description("# llama\n\nheads = 32\n  kv_heads=8  # grouped\nhead_dim = 128\n");
  REQUIRE(parsed.error.empty());
  CHECK(parsed.desc.group_size() == 4);
  CHECK(!parsed.desc.is_causal());
}

TEST_CASE("text form names the line and column of an unknown key", "[dsl][text]") {
  CHECK(parse_description("heads = 4\nhead_dim = 64\nwindow = 3\n").error == "line 3, column 1: unknown key `window`");
}

TEST_CASE("text form names the line and column of a bad value", "[dsl][text]") {
  CHECK(parse_description("heads = four\n").error == "line 1, column 9: bad value `four` for heads");
  CHECK(parse_description("heads = 4\ncausal = diagonal\n").error == "line 2, column 10: bad value `diagonal` for causal");
}

TEST_CASE("text form takes settings separated by semicolons on one line, naming the column", "[dsl][text]") {
  const auto parsed = parse_description("heads = 8; kv_heads = 2; head_dim = 64; causal = top_left");
  CHECK(parsed.error.empty());
  CHECK(parsed.desc == attention().heads(8).kv_heads(2).head_dim(64).causal(top_left));
  CHECK(parse_description("heads = 4; head_dim = 32; causal = sideways").error ==
        "line 1, column 36: bad value `sideways` for causal");
}

TEST_CASE("text form applies the description rules", "[dsl][text]") {
  CHECK(parse_description("heads = 6\nkv_heads = 4\nhead_dim = 64\n").error ==
        "heads must be a multiple of kv_heads (each kv head serves heads/kv_heads query heads)");
}

TEST_CASE("C++ form of a description is a DSL expression", "[dsl][text]") {
  const auto desc = attention().heads(8).kv_heads(1).head_dim(64).causal(top_left).scale(0.125f);
  CHECK(to_cpp(desc) ==
        "attngen::attention().heads(8).kv_heads(1).head_dim(64).v_head_dim(64)"
        ".causal(attngen::causal_alignment::top_left).scale(0x1p-3f).element(attngen::dtype::f32)");
}

TEST_CASE("text form round-trips the KV cache's knobs: ragged queries, a paged int8 cache, sinks", "[dsl][text]") {
  const auto desc = attention()
                        .heads(8)
                        .kv_heads(2)
                        .head_dim(64)
                        .ragged_queries()
                        .paged_kv(16)
                        .kv_element(dtype::i8)
                        .attention_sinks();
  const auto parsed = parse_description(to_text(desc));
  REQUIRE(parsed.error.empty());
  // The text form writes v_head_dim out.
  CHECK(parsed.desc == desc.v_head_dim(64));
  CHECK(to_text(desc).find("queries = ragged\nkv_layout = paged\npage_size = 16\nkv_dtype = i8\nsinks = true\n") !=
        std::string::npos);
}

TEST_CASE("text form leaves the dense layouts' knobs out, as before there was a KV cache", "[dsl][text]") {
  const std::string text = to_text(attention().heads(4).head_dim(32));
  CHECK(text.find("queries") == std::string::npos);
  CHECK(text.find("kv_layout") == std::string::npos);
  CHECK(text.find("kv_dtype") == std::string::npos);
  CHECK(text.find("sinks") == std::string::npos);
}

TEST_CASE("text form round-trips kv lengths with a bf16 cache", "[dsl][text]") {
  const auto desc = attention().heads(4).kv_heads(4).head_dim(32).v_head_dim(32).kv_lengths().kv_element(dtype::bf16);
  const auto parsed = parse_description(to_text(desc));
  REQUIRE(parsed.error.empty());
  CHECK(parsed.desc == desc);
}

TEST_CASE("C++ form of a KV cache description calls its setters", "[dsl][text]") {
  const auto desc = attention().heads(4).head_dim(32).ragged_queries().paged_kv(8).kv_element(dtype::bf16).attention_sinks();
  CHECK(to_cpp(desc) ==
        "attngen::attention().heads(4).kv_heads(4).head_dim(32).v_head_dim(32).element(attngen::dtype::f32)"
        ".ragged_queries().paged_kv(8).kv_element(attngen::dtype::bf16).attention_sinks()");
  CHECK(to_cpp(attention().heads(4).head_dim(32).kv_lengths()).find(".kv_lengths()") != std::string::npos);
}

TEST_CASE("text form round-trips f32 on the tensor cores and leaves it out when not chosen", "[dsl][text]") {
  const auto desc = attention().heads(4).kv_heads(4).head_dim(32).v_head_dim(32).f32_on_tensor_cores(dtype::bf16);
  const auto parsed = parse_description(to_text(desc));
  REQUIRE(parsed.error.empty());
  CHECK(parsed.desc == desc);
  CHECK(to_text(desc).find("f32_tensor_cores = bf16\n") != std::string::npos);
  CHECK(to_text(attention().heads(4).head_dim(32)).find("f32_tensor_cores") == std::string::npos);
}
