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
