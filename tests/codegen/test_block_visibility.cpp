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
#include "attngen/runtime/detail/visibility_slices.hpp"

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

// The visibility part's table for Lq and Lk on the finest of the targets' tiles `target_tiles`, with
// `lanes` keys per vector, sliced per target as the runtime slices it.
Halide::Buffer<uint8_t> visibility_part_slices(const attention_desc& desc, int query_length, int key_length,
                                               const std::vector<visibility_grid>& target_tiles, int lanes,
                                               const Halide::Buffer<int32_t>& ids) {
  visibility_table_algorithm t = define_visibility_table(desc, lanes);
  schedule_visibility_table_cpu(t);
  const visibility_layout layout = visibility_table_layout(target_tiles);
  const visibility_grid finest = layout.finest;
  t.captures.tensors[0].set(ids);
  t.query_length.set(query_length);
  t.key_length.set(key_length);
  t.tile_queries.set(finest.queries);
  t.block_keys.set(finest.keys);
  const detail::visibility_table_extents extents{batches, visibility_table_heads(desc),
                                                 (query_length + finest.queries - 1) / finest.queries,
                                                 (key_length + finest.keys - 1) / finest.keys};
  Halide::Buffer<uint8_t> table(int(extents.blocks), int(extents.tiles), int(extents.heads), batches);
  Halide::Pipeline(t.stages.table).realize(table, running_cpu_target());
  const int targets = int(target_tiles.size());
  Halide::Buffer<uint8_t> slices(int(extents.blocks), int(extents.tiles), targets * int(extents.heads), batches);
  detail::fill_visibility_slices(table.data(), extents, layout.ratios.data(), targets, slices.data());
  return slices;
}

// Target `target`'s slice of `slices` (one kv head: the mask ignores heads) on its tiles of `queries`
// x `keys`, in brute_force's order for every kv head.
std::vector<uint8_t> slice_marks(const attention_desc& desc, const Halide::Buffer<uint8_t>& slices, int target,
                                 int query_length, int key_length, int queries, int keys) {
  std::vector<uint8_t> bits;
  for (int b = 0; b < batches; ++b)
    for (int g = 0; g < desc.effective_kv_heads(); ++g)
      for (int it = 0; it < (query_length + queries - 1) / queries; ++it)
        for (int kb = 0; kb < (key_length + keys - 1) / keys; ++kb) bits.push_back(slices(kb, it, target, b));
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

TEST_CASE("the visibility table of a document mask is exact in each target's slice (tiles of 2 x 4 queries x keys, "
          "narrower than a vector of 8 keys, and 4 x 16 from them), Lq 29 Lk 53",
          "[codegen][sparsity]") {
  const auto desc = gqa.capture(document).mask_mod(document_mask(document));
  REQUIRE(visibility_table_heads(desc) == 1);
  const auto ids = document_ids();
  const auto slices = visibility_part_slices(desc, document_lq, document_lk, {{4, 16}, {2, 4}}, 8, ids);
  const auto same = [&](int b, int, int q, int kv) { return same_document(ids, b, q, kv); };
  CHECK(slice_marks(desc, slices, 0, document_lq, document_lk, 4, 16) ==
        brute_force(desc, document_lq, document_lk, same, 4, 16));
  CHECK(slice_marks(desc, slices, 1, document_lq, document_lk, 2, 4) ==
        brute_force(desc, document_lq, document_lk, same, 2, 4));
}

TEST_CASE("block visibility of a document mask read from its target's slice of the visibility part's table is "
          "exact (second of two targets), Lq 29 Lk 53",
          "[codegen][sparsity]") {
  const auto desc = gqa.capture(document).mask_mod(document_mask(document));
  blocking tiles = small_tiles();
  tiles.visibility_slice = 1;
  attention_algorithm a = define_attention(desc, tiles);
  REQUIRE(a.visibility_table.defined());
  const auto ids = document_ids();
  a.visibility_table.set(visibility_part_slices(desc, document_lq, document_lk, {{2, 4}, {4, 16}}, 8, ids));
  CHECK(kernel_marks(a, document_lq, document_lk, {ids}) ==
        brute_force(desc, document_lq, document_lk,
                    [&](int b, int, int q, int kv) { return same_document(ids, b, q, kv); }));
}

// Interval analysis proves (q >> 3) != (kv >> 5) over a block, not the equality: blocks shown whole
// are marked cut (their mask evaluated per key), and hidden ones are skipped.
TEST_CASE("block visibility of a block-diagonal mask written with shifts marks every hidden block at build time, "
          "Lq 37 Lk 70",
          "[codegen][sparsity][math]") {
  const auto desc = gqa.mask_mod((mod::q >> 3) == (mod::kv >> 5));
  attention_algorithm a = define_attention(desc, small_tiles());
  REQUIRE_FALSE(a.visibility_table.defined());
  const int lq = 37, lk = 70;
  const auto marks = kernel_marks(a, lq, lk);
  const auto expected = brute_force(desc, lq, lk, [](int, int, int q, int kv) { return (q >> 3) == (kv >> 5); });
  REQUIRE(marks.size() == expected.size());
  for (std::size_t n = 0; n < marks.size(); ++n) {
    CHECK((marks[n] & expected[n]) == expected[n]);
    if (expected[n] == some_key_hidden) CHECK(marks[n] == some_key_hidden);
  }
  CHECK(std::count(expected.begin(), expected.end(), int(some_key_hidden)) > 0);
}

TEST_CASE("block visibility of a dilated mask with % and & is sound: a block marked hidden or whole is, Lq 37 Lk 70",
          "[codegen][sparsity][math]") {
  const auto rule = [](int, int, int q, int kv) { return ((q - kv) % 3 + 3) % 3 == 0 && (kv & 32) == 0; };
  const auto desc = gqa.mask_mod((mod::q - mod::kv) % 3 == 0 && (mod::kv & 32) == 0);
  attention_algorithm a = define_attention(desc, small_tiles());
  const int lq = 37, lk = 70;
  const auto marks = kernel_marks(a, lq, lk);
  const auto expected = brute_force(desc, lq, lk, rule);
  REQUIRE(marks.size() == expected.size());
  for (std::size_t n = 0; n < marks.size(); ++n) CHECK((marks[n] & expected[n]) == expected[n]);
}
