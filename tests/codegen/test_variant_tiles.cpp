// The variants' tilings as the run-time rule sees them: the single_query threshold stands on its own,
// whatever rows a short_queries tile holds, so a few queries never fall to single_query because that
// variant's tiles grew.
#include <catch2/catch.hpp>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/codegen/variants.hpp"

using namespace attngen;
using namespace attngen::codegen;

namespace {
constexpr attention_desc gqa_decoding = attention().heads(32).kv_heads(8).head_dim(128).causal(bottom_right);
const Halide::Target avx512("x86-64-linux-avx512_skylake-fma-f16c");
const Halide::Target avx2("x86-64-linux-avx2-fma-f16c");
}  // namespace

TEST_CASE("variant tiles: GQA 32/8 on AVX-512 takes single_query below 4 queries, 8-query short_queries tiles",
          "[variants]") {
  CHECK(single_query_threshold(gqa_decoding, avx512) == 4);
  CHECK(cpu_variant_blocking(gqa_decoding, avx512, kernel_variant::short_queries).queries_per_tile == 8);
}

TEST_CASE("variant tiles: speculative decoding's 4 to 7 queries (GQA 32/8, AVX-512) read the cache once",
          "[variants]") {
  const int threshold = single_query_threshold(gqa_decoding, avx512);
  CHECK(choose_variant(3, 4096, 4, true, threshold) == kernel_variant::single_query);
  for (int queries = 4; queries <= 7; ++queries)
    CHECK(choose_variant(queries, 4096, 4, true, threshold) == kernel_variant::short_queries);
}

TEST_CASE("variant tiles: MHA on AVX2 takes single_query below 16 queries, 32-query short_queries tiles",
          "[variants]") {
  constexpr attention_desc mha = attention().heads(16).head_dim(64);
  CHECK(single_query_threshold(mha, avx2) == 16);
  CHECK(cpu_variant_blocking(mha, avx2, kernel_variant::short_queries).queries_per_tile == 32);
}

TEST_CASE("variant tiles: AVX2's q.k register tiles span 3 key vectors at head_dim 128 in 256-key blocks, else 2",
          "[variants]") {
  constexpr attention_desc gqa = attention().heads(32).kv_heads(8).head_dim(128);
  const blocking long_blocks = cpu_variant_blocking(gqa, avx2, kernel_variant::general);
  CHECK(long_blocks.key_block == 256);
  CHECK(long_blocks.qk_key_group == 24);
  CHECK(cpu_variant_blocking(gqa.causal(top_left), avx2, kernel_variant::general).qk_key_group == 16);
  CHECK(cpu_variant_blocking(attention().heads(16).head_dim(64), avx2, kernel_variant::general).qk_key_group == 16);
  CHECK(cpu_variant_blocking(gqa, avx512, kernel_variant::general).qk_key_group == 64);
}

TEST_CASE("variant tiles: a paged cache's short_queries blocks hold 512 keys on AVX-512, dense ones 256",
          "[variants]") {
  CHECK(cpu_variant_blocking(gqa_decoding.paged_kv(16), avx512, kernel_variant::short_queries).key_block == 512);
  CHECK(cpu_variant_blocking(gqa_decoding, avx512, kernel_variant::short_queries).key_block == 256);
}

TEST_CASE("variant tiles: every variant's tiles on AVX-512, AVX2 and baseline x86 nest, groups of 1 to 16",
          "[variants]") {
  const Halide::Target baseline("x86-64-linux");
  for (int group = 1; group <= 16; ++group)
    for (int variant = 0; variant < kernel_variant_count; ++variant) {
      const attention_desc desc = attention().heads(2 * group).kv_heads(2).head_dim(64);
      const int widest = cpu_variant_blocking(desc, avx512, kernel_variant(variant)).queries_per_tile;
      for (const Halide::Target& target : {avx2, baseline}) {
        const int queries = cpu_variant_blocking(desc, target, kernel_variant(variant)).queries_per_tile;
        INFO("group " << group << ", variant " << variant << ", " << target.to_string());
        CHECK(widest % queries == 0);
      }
    }
}

TEST_CASE("variant tiles: decoding a paged cache (GQA 32/8 D128) splits f32 by 256 keys, bf16 and int8 by 512, so "
          "each split stages at most 1 MiB of values",
          "[variants]") {
  const auto keys_per_split = [](dtype kv) {
    return cpu_variant_blocking(gqa_decoding.paged_kv(16).kv_element(kv), avx512, kernel_variant::single_query)
        .key_block;
  };
  CHECK(keys_per_split(dtype::f32) == 256);
  CHECK(keys_per_split(dtype::bf16) == 512);
  CHECK(keys_per_split(dtype::i8) == 512);
}

TEST_CASE("variant tiles: decoding a paged f32 cache of 32 kv heads of 128 splits by 128 keys, no fewer",
          "[variants]") {
  constexpr attention_desc wide = attention().heads(32).kv_heads(32).head_dim(128).paged_kv(16);
  CHECK(cpu_variant_blocking(wide, avx512, kernel_variant::single_query).key_block == 128);
}

TEST_CASE("variant tiles: decoding dense tensors per kv head (GQA 32/8 D128, f32) keeps 512-key splits",
          "[variants]") {
  CHECK(cpu_variant_blocking(gqa_decoding, avx512, kernel_variant::single_query).key_block == 512);
}
