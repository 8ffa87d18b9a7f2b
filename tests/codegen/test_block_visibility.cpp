// Block sparsity: what the mask modifier shows of each (query tile, key block) pair, as the kernels
// see it (algorithm's block_visibility, through the JIT), against a brute-force classification.
// Blocks marked hidden are skipped and blocks marked whole skip the mask, so the marks must be sound;
// for these masks they are also exact.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "Halide.h"
#include "attngen/builtins.hpp"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/targets.hpp"

using namespace attngen;
using namespace attngen::codegen;

namespace {

constexpr int batches = 2;
constexpr int tile_queries = 4;
constexpr int block_keys = 16;

blocking small_tiles() {
  blocking tiles;
  tiles.queries_per_tile = tile_queries;
  tiles.key_block = block_keys;
  tiles.lanes = 8;
  return tiles;
}

using visibility_rule = std::function<bool(int b, int h, int q, int kv)>;

// The bits block_visibility should hold for every (kb, it, g, b), with keys past Lk and rows past Lq
// counting as neither visible nor hidden (so a block hidden whole is some_key_hidden alone).
std::vector<uint8_t> brute_force(const attention_desc& desc, int query_length, int key_length,
                                 const visibility_rule& visible) {
  const int tiles = (query_length + tile_queries - 1) / tile_queries, blocks = (key_length + block_keys - 1) / block_keys;
  const int group = desc.group_size();
  std::vector<uint8_t> bits;
  for (int b = 0; b < batches; ++b)
    for (int g = 0; g < desc.effective_kv_heads(); ++g)
      for (int it = 0; it < tiles; ++it)
        for (int kb = 0; kb < blocks; ++kb) {
          uint8_t block = 0;
          for (int q = it * tile_queries; q < std::min(query_length, (it + 1) * tile_queries); ++q)
            for (int h = g * group; h < (g + 1) * group; ++h)
              for (int kv = kb * block_keys; kv < std::min(key_length, (kb + 1) * block_keys); ++kv)
                block |= visible(b, h, q, kv) ? some_key_visible : some_key_hidden;
          bits.push_back(block);
        }
  return bits;
}

// block_visibility realised for q of length Lq and k of length Lk, in brute_force's order.
std::vector<uint8_t> kernel_marks(attention_algorithm& a, int query_length, int key_length,
                                  const std::vector<Halide::Buffer<int32_t>>& captures = {}) {
  const attention_desc& desc = a.desc;
  Halide::Buffer<float> q(desc.qk_head_dim, desc.num_heads, query_length, batches);
  Halide::Buffer<float> k(desc.qk_head_dim, desc.effective_kv_heads(), key_length, batches);
  a.q.set(q);
  a.k.set(k);
  for (std::size_t n = 0; n < captures.size(); ++n) a.captures.tensors[n].set(captures[n]);
  const int tiles = (query_length + tile_queries - 1) / tile_queries, blocks = (key_length + block_keys - 1) / block_keys;
  Halide::Buffer<uint8_t> marks =
      a.block_visibility.realize({blocks, tiles, desc.effective_kv_heads(), batches}, running_cpu_target());
  std::vector<uint8_t> bits;
  for (int b = 0; b < batches; ++b)
    for (int g = 0; g < desc.effective_kv_heads(); ++g)
      for (int it = 0; it < tiles; ++it)
        for (int kb = 0; kb < blocks; ++kb) bits.push_back(marks(kb, it, g, b));
  return bits;
}

const auto gqa = attention().heads(4).kv_heads(2).head_dim(16);

}  // namespace

TEST_CASE("block visibility of a sliding window (left 20, right 3) is exact at build time, Lq 37 Lk 70",
          "[codegen][sparsity]") {
  const auto desc = gqa.mask_mod(sliding_window(20, 3));
  attention_algorithm a = define_attention(desc, small_tiles());
  REQUIRE_FALSE(a.block_visibility_lanes.defined());
  const int lq = 37, lk = 70;
  const auto marks = kernel_marks(a, lq, lk);
  const auto expected = brute_force(desc, lq, lk, [&](int, int, int q, int kv) {
    return q - 20 <= kv && kv <= q + 3;
  });
  CHECK(marks == expected);
  // The window spans blocks whole, so hidden, whole and partial blocks all occur.
  for (int kind : {int(some_key_hidden), int(some_key_visible), some_key_visible | some_key_hidden}) CHECK(std::count(expected.begin(), expected.end(), kind) > 0);
}

TEST_CASE("block visibility of a document mask is exact from the run-time table, Lq 29 Lk 53",
          "[codegen][sparsity]") {
  constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
  const auto desc = gqa.capture(document).mask_mod(document_mask(document));
  attention_algorithm a = define_attention(desc, small_tiles());
  REQUIRE(a.block_visibility_lanes.defined());
  const int lq = 29, lk = 53;
  // Batch 0: documents of 20, 20 and 13 keys; batch 1: one document.
  Halide::Buffer<int32_t> ids(lk, batches);
  for (int kv = 0; kv < lk; ++kv) {
    ids(kv, 0) = kv / 20;
    ids(kv, 1) = 7;
  }
  const auto marks = kernel_marks(a, lq, lk, {ids});
  const auto expected = brute_force(desc, lq, lk, [&](int b, int, int q, int kv) { return ids(q, b) == ids(kv, b); });
  CHECK(marks == expected);
  for (int kind : {int(some_key_hidden), int(some_key_visible), some_key_visible | some_key_hidden}) CHECK(std::count(expected.begin(), expected.end(), kind) > 0);
}
