// The run-time choice among a kernel's generated variants: the least wasteful tiling for the shape, and
// the backward pass's passes for the call's tasks and the pool's threads.
#include <catch2/catch.hpp>

#include "attngen/runtime/detail/variants.hpp"

using attngen::backward_passes;
using attngen::choose_backward_passes;
using attngen::choose_module_variant;
using attngen::choose_variant;
using attngen::kernel_variant;
using attngen::module_has_variant;

namespace {
constexpr bool causal = true;
constexpr bool not_causal = false;
}  // namespace

TEST_CASE("decoding one query with GQA groups of 4 uses single_query tiles", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(1, 4096, 4, not_causal, 4) == kernel_variant::single_query);
}

TEST_CASE("two queries below a threshold of 4 with groups of 4 use single_query tiles", "[runtime][variants]") {
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

TEST_CASE("prefill with 1023 queries in GQA groups of 4 transposes K although its last tile is partial", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(1023, 1023, 4, not_causal, 4) == kernel_variant::general);
  STATIC_REQUIRE(choose_variant(5, 4096, 4, not_causal, 4) == kernel_variant::short_queries);
}

TEST_CASE("causal MHA prefill of 512 queries keeps K as stored (short_queries)", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(512, 512, 1, causal, 16) == kernel_variant::short_queries);
  STATIC_REQUIRE(choose_variant(17, 113, 1, not_causal, 16) == kernel_variant::short_queries);
}

TEST_CASE("causality halves the rows each key serves", "[runtime][variants]") {
  STATIC_REQUIRE(choose_variant(2048, 2048, 1, not_causal, 16) == kernel_variant::general);
  STATIC_REQUIRE(choose_variant(2048, 2048, 1, causal, 16) == kernel_variant::short_queries);
}

TEST_CASE("a self-attention module of 3 tokens, which lacks single_query, uses short key blocks", "[runtime][variants]") {
  STATIC_REQUIRE(!module_has_variant(kernel_variant::single_query, true));
  STATIC_REQUIRE(choose_module_variant(3, 3, 1, not_causal, 16, true) == kernel_variant::short_keys);
  STATIC_REQUIRE(choose_module_variant(3, 5, 1, not_causal, 16, true) == kernel_variant::short_keys);
}

TEST_CASE("a cross-attention module decoding one query uses single_query tiles", "[runtime][variants]") {
  STATIC_REQUIRE(module_has_variant(kernel_variant::single_query, false));
  STATIC_REQUIRE(choose_module_variant(1, 512, 1, not_causal, 16, false) == kernel_variant::single_query);
}

namespace {
// Whether every self-attention length up to 4096 (with 0 to 2 appended keys, in groups of 1 to 16
// heads, single_query thresholds of 1 to 16 queries) chooses a variant that plain choose_variant
// would take there too, except single_query, which becomes short_keys only where short_keys serves.
constexpr bool self_attention_choices_are_plain_ones_or_short_keys() {
  for (int threshold = 1; threshold <= 16; ++threshold)
    for (int group = 1; group <= 16; group *= 2)
      for (std::int64_t length = 1; length <= 4096; ++length)
        for (int extra = 0; extra <= 2; ++extra) {
          const kernel_variant plain = choose_variant(length, length + extra, group, not_causal, threshold);
          const kernel_variant module =
              choose_module_variant(length, length + extra, group, not_causal, threshold, true);
          if (plain == kernel_variant::single_query) {
            if (module != kernel_variant::short_keys || length + extra > attngen::short_keys_max_length) return false;
          } else if (module != plain) {
            return false;
          }
        }
  return true;
}
}  // namespace

TEST_CASE("self-attention modules replace single_query only where key blocks are short", "[runtime][variants]") {
  REQUIRE(self_attention_choices_are_plain_ones_or_short_keys());
}

TEST_CASE("a backward pass of 8 kv-head tasks on 2 threads runs in one pass", "[runtime][variants][backward]") {
  STATIC_REQUIRE(choose_backward_passes(8, 2) == backward_passes::one);
}

TEST_CASE("a backward pass of 8 kv-head tasks on 16 threads runs in two passes", "[runtime][variants][backward]") {
  STATIC_REQUIRE(choose_backward_passes(8, 16) == backward_passes::two);
}

TEST_CASE("a backward pass of 8 tasks on 6 threads, 2 rounds two-thirds full, runs in two passes",
          "[runtime][variants][backward]") {
  STATIC_REQUIRE(choose_backward_passes(8, 6) == backward_passes::two);
}

TEST_CASE("a backward pass of 7 tasks on 8 threads, 7 of 8 busy, runs in one pass", "[runtime][variants][backward]") {
  STATIC_REQUIRE(choose_backward_passes(7, 8) == backward_passes::one);
}

TEST_CASE("a backward pass on one thread runs in one pass, whatever its tasks", "[runtime][variants][backward]") {
  STATIC_REQUIRE(choose_backward_passes(1, 1) == backward_passes::one);
}
