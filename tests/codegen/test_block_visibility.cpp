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
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/visibility_table.hpp"

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

// The bits a visibility table on tiles of `queries` x blocks of `keys` should hold for every (kb,
// it, g, b), with keys past Lk and rows past Lq counting as neither visible nor hidden (so a block
// hidden whole is some_key_hidden alone).
std::vector<uint8_t> brute_force(const attention_desc& desc, int query_length, int key_length,
                                 const visibility_rule& visible, int queries = tile_queries, int keys = block_keys) {
  const int tiles = (query_length + queries - 1) / queries, blocks = (key_length + keys - 1) / keys;
  const int group = desc.group_size();
  std::vector<uint8_t> bits;
  for (int b = 0; b < batches; ++b)
    for (int g = 0; g < desc.effective_kv_heads(); ++g)
      for (int it = 0; it < tiles; ++it)
        for (int kb = 0; kb < blocks; ++kb) {
          uint8_t block = 0;
          for (int q = it * queries; q < std::min(query_length, (it + 1) * queries); ++q)
            for (int h = g * group; h < (g + 1) * group; ++h)
              for (int kv = kb * keys; kv < std::min(key_length, (kb + 1) * keys); ++kv)
                block |= visible(b, h, q, kv) ? some_key_visible : some_key_hidden;
          bits.push_back(block);
        }
  return bits;
}

// The visibility part's table for Lq and Lk on a grid of `queries` x `keys`, with `lanes` keys per
// vector, in brute_force's order for every kv head.
Halide::Buffer<uint8_t> visibility_part_table(const attention_desc& desc, int query_length, int key_length, int queries,
                                              int keys, int lanes, const Halide::Buffer<int32_t>& ids) {
  visibility_table_algorithm t = define_visibility_table(desc, lanes);
  schedule_visibility_table_cpu(t);
  t.captures.tensors[0].set(ids);
  t.query_length.set(query_length);
  t.key_length.set(key_length);
  t.tile_queries.set(queries);
  t.block_keys.set(keys);
  Halide::Buffer<uint8_t> table((key_length + keys - 1) / keys, (query_length + queries - 1) / queries,
                                visibility_table_heads(desc), batches);
  Halide::Pipeline(t.stages.table).realize(table, running_cpu_target());
  return table;
}

// `table` (one kv head, the mask ignores heads) in brute_force's order for every kv head.
std::vector<uint8_t> table_marks(const attention_desc& desc, const Halide::Buffer<uint8_t>& table) {
  std::vector<uint8_t> bits;
  for (int b = 0; b < batches; ++b)
    for (int g = 0; g < desc.effective_kv_heads(); ++g)
      for (int it = 0; it < table.dim(1).extent(); ++it)
        for (int kb = 0; kb < table.dim(0).extent(); ++kb) bits.push_back(table(kb, it, 0, b));
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
  REQUIRE_FALSE(a.visibility_in_pipeline.table.defined());
  REQUIRE_FALSE(a.visibility_table.defined());
  const int lq = 37, lk = 70;
  const auto marks = kernel_marks(a, lq, lk);
  const auto expected = brute_force(desc, lq, lk, [&](int, int, int q, int kv) {
    return q - 20 <= kv && kv <= q + 3;
  });
  CHECK(marks == expected);
  // The window spans blocks whole, so hidden, whole and partial blocks all occur.
  for (int kind : {int(some_key_hidden), int(some_key_visible), some_key_visible | some_key_hidden}) CHECK(std::count(expected.begin(), expected.end(), kind) > 0);
}

namespace {

constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
constexpr int document_lq = 29, document_lk = 53;

// Batch 0: documents of 20, 20 and 13 keys; batch 1: one document.
Halide::Buffer<int32_t> document_ids() {
  Halide::Buffer<int32_t> ids(document_lk, batches);
  for (int kv = 0; kv < document_lk; ++kv) {
    ids(kv, 0) = kv / 20;
    ids(kv, 1) = 7;
  }
  return ids;
}

bool same_document(const Halide::Buffer<int32_t>& ids, int b, int q, int kv) { return ids(q, b) == ids(kv, b); }

}  // namespace

TEST_CASE("block visibility of a document mask is exact from the table computed in the kernel (GPU kernels), Lq 29 "
          "Lk 53",
          "[codegen][sparsity]") {
  const auto desc = gqa.capture(document).mask_mod(document_mask(document));
  attention_algorithm a = define_attention(desc, small_tiles());
  REQUIRE(a.visibility_in_pipeline.table.defined());
  const auto ids = document_ids();
  const auto marks = kernel_marks(a, document_lq, document_lk, {ids});
  const auto expected = brute_force(desc, document_lq, document_lk,
                                    [&](int b, int, int q, int kv) { return same_document(ids, b, q, kv); });
  CHECK(marks == expected);
  for (int kind : {int(some_key_hidden), int(some_key_visible), some_key_visible | some_key_hidden}) CHECK(std::count(expected.begin(), expected.end(), kind) > 0);
}

TEST_CASE("the visibility part's table of a document mask is exact on a grid of blocks narrower than a vector "
          "(2 queries x 4 keys, 8 lanes), Lq 29 Lk 53",
          "[codegen][sparsity]") {
  const auto desc = gqa.capture(document).mask_mod(document_mask(document));
  const auto ids = document_ids();
  const auto table = visibility_part_table(desc, document_lq, document_lk, 2, 4, 8, ids);
  REQUIRE(visibility_table_heads(desc) == 1);
  CHECK(table_marks(desc, table) == brute_force(desc, document_lq, document_lk,
                                                [&](int b, int, int q, int kv) { return same_document(ids, b, q, kv); },
                                                2, 4));
}

TEST_CASE("block visibility of a document mask read from the visibility part's table on a finer grid (tiles of 4 from "
          "2 queries, blocks of 16 from 4 keys) is exact, Lq 29 Lk 53",
          "[codegen][sparsity]") {
  const auto desc = gqa.capture(document).mask_mod(document_mask(document));
  blocking tiles = small_tiles();
  tiles.visibility_grid_queries = 2;
  tiles.visibility_grid_keys = 4;
  attention_algorithm a = define_attention(desc, tiles);
  REQUIRE(a.visibility_table.defined());
  const auto ids = document_ids();
  a.visibility_table.set(visibility_part_table(desc, document_lq, document_lk, 2, 4, 8, ids));
  CHECK(kernel_marks(a, document_lq, document_lk, {ids}) ==
        brute_force(desc, document_lq, document_lk,
                    [&](int b, int, int q, int kv) { return same_document(ids, b, q, kv); }));
}
