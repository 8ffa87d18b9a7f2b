// The run-time choice among a kernel's generated variants: the least wasteful tiling for the shape.
#include <catch2/catch.hpp>

#include "attngen/runtime/variants.hpp"

using attngen::choose_variant;
using attngen::kernel_variant;

namespace {
constexpr bool causal = true;
constexpr bool not_causal = false;
}  // namespace

TEST_CASE("decoding one query with GQA groups of 4 uses single_query tiles", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(1, 4096, 4, not_causal, 4) == kernel_variant::single_query);
}

TEST_CASE("two queries per 4-query tile with groups of 4 use single_query tiles", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(2, 4096, 4, not_causal, 4) == kernel_variant::single_query);
}

TEST_CASE("MHA with 10 queries and 10 keys uses short key blocks", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(10, 10, 1, not_causal, 16) == kernel_variant::short_keys);
}

TEST_CASE("MHA decoding one query uses single_query tiles despite 1-row register tiles", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(1, 512, 1, not_causal, 16) == kernel_variant::single_query);
}

TEST_CASE("81 keys are past the short-key limit", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(64, 81, 1, not_causal, 16) == kernel_variant::short_queries);
  STATIC_REQUIRE(choose_variant(64, 80, 1, not_causal, 16) == kernel_variant::short_keys);
}

TEST_CASE("prefill with 2048 queries in GQA groups of 4 transposes K (general)", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(2048, 2048, 4, not_causal, 4) == kernel_variant::general);
  STATIC_REQUIRE(choose_variant(1024, 1024, 4, causal, 4) == kernel_variant::general);
}

TEST_CASE("causal MHA prefill of 512 queries keeps K as stored (short_queries)", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(512, 512, 1, causal, 16) == kernel_variant::short_queries);
  STATIC_REQUIRE(choose_variant(17, 113, 1, not_causal, 16) == kernel_variant::short_queries);
}

TEST_CASE("causality halves the rows each key serves", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(2048, 2048, 1, not_causal, 16) == kernel_variant::general);
  STATIC_REQUIRE(choose_variant(2048, 2048, 1, causal, 16) == kernel_variant::short_queries);
}
