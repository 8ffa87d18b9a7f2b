// The description language: defaults, builders and validation rules, checked at compile time where
// the language promises compile-time behaviour.
#include <catch2/catch.hpp>

#include "attngen/attngen.hpp"

using namespace attngen;

namespace {
constexpr auto gqa = attention().heads(32).kv_heads(8).head_dim(128);
}

TEST_CASE("kv_heads defaults to heads (multi-head attention)", "[dsl]") {
  constexpr auto mha = attention().heads(16).head_dim(64);
  STATIC_REQUIRE(mha.effective_kv_heads() == 16);
  STATIC_REQUIRE(mha.group_size() == 1);
}

TEST_CASE("v_head_dim defaults to head_dim and may differ from it", "[dsl]") {
  STATIC_REQUIRE(gqa.effective_v_head_dim() == 128);
  STATIC_REQUIRE(gqa.v_head_dim(64).effective_v_head_dim() == 64);
}

TEST_CASE("GQA 32/8 groups four query heads per kv head", "[dsl]") { STATIC_REQUIRE(gqa.group_size() == 4); }

TEST_CASE("setters return a new description and leave the original unchanged", "[dsl]") {
  constexpr auto causal = gqa.causal(bottom_right);
  STATIC_REQUIRE(!gqa.is_causal());
  STATIC_REQUIRE(causal.causal_mode == causal_alignment::bottom_right);
}

TEST_CASE("validated<D>() returns a valid description unchanged", "[dsl]") {
  STATIC_REQUIRE(validated<gqa>() == gqa);
}

TEST_CASE("each rule names its problem at run time", "[dsl]") {
  CHECK(first_problem(gqa).empty());
  CHECK(first_problem(attention().head_dim(64)) == "heads is not set: call .heads(n)");
  CHECK(first_problem(attention().heads(0).head_dim(64)) == "heads must be at least 1");
  CHECK(first_problem(attention().heads(4).kv_heads(0).head_dim(64)) == "kv_heads must be at least 1");
  CHECK(first_problem(attention().heads(32).kv_heads(5).head_dim(64)) ==
        "heads must be a multiple of kv_heads (each kv head serves heads/kv_heads query heads)");
  CHECK(first_problem(attention().heads(4)) == "head_dim is not set: call .head_dim(n)");
  CHECK(first_problem(attention().heads(4).head_dim(0)) == "head_dim must be between 1 and 512");
  CHECK(first_problem(attention().heads(4).head_dim(64).v_head_dim(513)) == "v_head_dim must be between 1 and 512");
  CHECK(first_problem(gqa.scale(__builtin_nanf(""))) == "scale must be a finite number");
  CHECK(first_problem(gqa.element(dtype::u8)) ==
        "element type must be f32, f16 or bf16 (u8 is for boolean masks, i32 for captured tensors)");
}

TEST_CASE("kv_heads larger than heads is rejected as not dividing it", "[dsl]") {
  STATIC_REQUIRE(!is_valid(attention().heads(4).kv_heads(8).head_dim(64)));
}

TEST_CASE("KV cache rules name their problem at run time", "[dsl][kv_cache]") {
  CHECK(first_problem(gqa.paged_kv(12)) == "page_size must be a power of two from 1 to 256");
  CHECK(first_problem(gqa.paged_kv(512)) == "page_size must be a power of two from 1 to 256");
  CHECK(first_problem(gqa.paged_kv(0)) == "page_size must be a power of two from 1 to 256");
  attention_desc page_size_alone = gqa;
  page_size_alone.kv_page_size = 16;
  CHECK(first_problem(page_size_alone) ==
        "page_size is given with a paged KV cache and only then: call .paged_kv(page_size)");
  CHECK(first_problem(gqa.kv_element(dtype::u8)) == "the KV element type must be f32, f16, bf16 or i8 (with float32 scales)");
  CHECK(first_problem(gqa.ragged_queries().additive_mask(mask_shape::b_h_lq_lk)) ==
        "with ragged queries the additive mask's rows are the packed queries: its shape is lq_lk ((total_q, Lk)) or "
        "h_lq_lk ((H, total_q, Lk)), not one with a batch dimension");
  constexpr auto per_query = tensor<capture_type::f32>("per_query", dim::query_length);
  CHECK(first_problem(gqa.ragged_queries().capture(per_query)) ==
        "with ragged queries a captured tensor cannot have a query_length extent (sequences differ in it); "
        "index it by key, head, batch or a fixed extent");
  CHECK(first_problem(gqa.paged_kv(1)).empty());
  CHECK(first_problem(gqa.paged_kv(256).kv_element(dtype::i8).ragged_queries().attention_sinks()).empty());
}

TEST_CASE("the KV element type defaults to the element type and may differ from it", "[dsl][kv_cache]") {
  STATIC_REQUIRE(gqa.element(dtype::bf16).effective_kv_element() == dtype::bf16);
  STATIC_REQUIRE(gqa.element(dtype::bf16).kv_element(dtype::i8).effective_kv_element() == dtype::i8);
  STATIC_REQUIRE(gqa.kv_element(dtype::i8).has_kv_scales());
}

TEST_CASE("a description runs per sequence with ragged queries, kv lengths or pages, and not otherwise",
          "[dsl][kv_cache]") {
  STATIC_REQUIRE(!gqa.has_sequence_lengths());
  STATIC_REQUIRE(gqa.ragged_queries().has_sequence_lengths());
  STATIC_REQUIRE(gqa.kv_lengths().has_sequence_lengths());
  STATIC_REQUIRE(gqa.paged_kv(16).has_sequence_lengths() && gqa.paged_kv(16).has_kv_lengths());
}

TEST_CASE("global positions need dense queries and keys and no backward pass", "[dsl][positions]") {
  const auto gqa = attention().heads(4).kv_heads(2).head_dim(64).return_lse().with_global_positions();
  CHECK(first_problem(gqa).empty());
  CHECK(first_problem(gqa.ragged_queries()).starts_with("global positions place one slice of one sequence per call"));
  CHECK(first_problem(gqa.paged_kv(16)).starts_with("global positions place one slice of one sequence per call"));
  CHECK(first_problem(gqa.with_backward()) ==
        "the backward pass takes the whole sequence's queries and keys: no .with_global_positions()");
}

TEST_CASE("global positions add the positions argument, and captures span the whole sequence", "[dsl][positions]") {
  using namespace attngen::mod;
  constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
  constexpr auto desc = attention().heads(4).head_dim(64).capture(document).mask_mod(document_mask(document))
                            .return_lse().with_global_positions();
  bool has_positions = false;
  for (const kernel_argument& a : kernel_arguments(desc)) {
    if (a.slot == argument_slot::positions) {
      has_positions = true;
      CHECK(a.host_only);
      CHECK(a.rank == 1);
      CHECK(a.dims[0].extent == global_position_count);
    }
    if (a.slot == argument_slot::capture) CHECK(a.dims[1].source == extent_source::key_total);
  }
  CHECK(has_positions);
}

TEST_CASE("f32 on the tensor cores is a choice of f32 descriptions, in bf16 or f16", "[dsl][tensorcore]") {
  STATIC_REQUIRE(gqa.tensor_core_type() == dtype::f32);
  STATIC_REQUIRE(gqa.f32_on_tensor_cores(dtype::bf16).tensor_core_type() == dtype::bf16);
  STATIC_REQUIRE(gqa.element(dtype::f16).tensor_core_type() == dtype::f16);
  CHECK(first_problem(gqa.f32_on_tensor_cores(dtype::f16)).empty());
  CHECK(first_problem(gqa.f32_on_tensor_cores(dtype::i8)) ==
        "f32_tensor_cores must be bf16 or f16 (the types the tensor cores take), or f32 for none");
  CHECK(first_problem(gqa.element(dtype::bf16).f32_on_tensor_cores(dtype::bf16)) ==
        "f32_tensor_cores is a precision choice for f32 descriptions; bf16 and f16 ones take the tensor cores in "
        "their own type");
}
