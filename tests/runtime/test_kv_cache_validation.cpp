// Calls against a KV cache that the runtime refuses, each with the named error and nothing written:
// page indices outside the pool, kv lengths past what a table row holds, query offsets that start
// elsewhere than 0, decrease or pass total_q, scale tensors of the wrong shape, tensors the runtime
// reads on a device. And a pool past 2^31 elements, which must work.
#include <catch2/catch.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "aot_paged_decode.hpp"
#include "aot_paged_int8_kv_sinks.hpp"
#include "aot_ragged_paged_prefill.hpp"
#include "support/compare.hpp"
#include "support/sequence_batch.hpp"

using namespace attngen;
using namespace attngen::testing;
using Catch::Matchers::StartsWith;

namespace {

constexpr std::uint8_t poison = 0xAB;

// A batch whose outputs hold `poison`, so a test can tell whether anything was written.
sequence_batch poisoned_batch(const attention_desc& desc, const std::vector<int>& queries, const std::vector<int>& keys) {
  sequence_batch batch = make_sequence_batch(desc, queries, keys, 5);
  std::fill(batch.output.begin(), batch.output.end(), poison);
  std::memset(batch.lse.data(), poison, batch.lse.size() * sizeof(float));
  return batch;
}

bool nothing_written(const sequence_batch& batch) {
  const auto* lse = reinterpret_cast<const std::uint8_t*>(batch.lse.data());
  return std::all_of(batch.output.begin(), batch.output.end(), [](std::uint8_t b) { return b == poison; }) &&
         std::all_of(lse, lse + batch.lse.size() * sizeof(float), [](std::uint8_t b) { return b == poison; });
}

}  // namespace

TEST_CASE("paged KV cache: a page index outside the pool is refused, naming page_table, nothing written",
          "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_paged_decode::description, {1, 1}, {20, 5});
  // Sequence 0's second page (its keys 16 to 19).
  batch.page_table[1] = batch.num_pages;
  const status s = aot_paged_decode::run(batch.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("page_table: page_table[0][1] = " + std::to_string(batch.num_pages) +
                                     " is outside the pool's pages"));
  CHECK(nothing_written(batch));
}

TEST_CASE("paged KV cache: a negative page index is refused, naming page_table", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_paged_decode::description, {1, 1}, {20, 5});
  batch.page_table[std::size_t(batch.max_pages)] = -1;
  const status s = aot_paged_decode::run(batch.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("page_table: page_table[1][0] = -1"));
  CHECK(nothing_written(batch));
}

TEST_CASE("paged KV cache: table entries past a sequence's pages are not read, and may hold anything",
          "[kv_cache]") {
  sequence_batch batch = poisoned_batch(aot_paged_decode::description, {1, 1}, {20, 5});
  batch.page_table[std::size_t(batch.max_pages) + 1] = -7;  // sequence 1 has one page
  REQUIRE(aot_paged_decode::run(batch.args()).ok());
  CHECK(compare_sequences_with_reference(batch).ok);
}

TEST_CASE("paged KV cache: a kv length past the keys a table row holds is refused, naming kv_lengths",
          "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_paged_decode::description, {1, 1}, {20, 5});
  batch.kv_lengths[1] = batch.max_pages * 16 + 1;
  const status s = aot_paged_decode::run(batch.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("kv_lengths: kv_lengths[1] = " + std::to_string(batch.max_pages * 16 + 1) +
                                     " is outside 0 to " + std::to_string(batch.max_pages * 16)));
  CHECK(nothing_written(batch));
}

TEST_CASE("paged KV cache: a negative kv length is refused, naming kv_lengths", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_paged_decode::description, {1, 1}, {20, 5});
  batch.kv_lengths[0] = -1;
  const status s = aot_paged_decode::run(batch.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("kv_lengths: kv_lengths[0] = -1"));
  CHECK(nothing_written(batch));
}

TEST_CASE("ragged queries: offsets that decrease are refused, naming q_offsets", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_ragged_paged_prefill::description, {3, 4, 2}, {9, 9, 9});
  batch.q_offsets[2] = 2;  // {0, 3, 2, 9}
  const status s = aot_ragged_paged_prefill::run(batch.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("q_offsets: decreases at sequence 1"));
  CHECK(nothing_written(batch));
}

TEST_CASE("ragged queries: offsets past total_q are refused, naming q_offsets", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_ragged_paged_prefill::description, {3, 4, 2}, {9, 9, 9});
  batch.q_offsets[3] = 10;
  const status s = aot_ragged_paged_prefill::run(batch.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("q_offsets: q_offsets[3] = 10 exceeds total_q (9"));
  CHECK(nothing_written(batch));
}

TEST_CASE("ragged queries: offsets that do not start at 0 are refused, naming q_offsets", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_ragged_paged_prefill::description, {3, 4, 2}, {9, 9, 9});
  batch.q_offsets[0] = 1;
  const status s = aot_ragged_paged_prefill::run(batch.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("q_offsets: must start at 0"));
  CHECK(nothing_written(batch));
}

TEST_CASE("ragged queries: q_offsets of another batch than the page table's is refused", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_ragged_paged_prefill::description, {3, 4, 2}, {9, 9, 9});
  attention_args args = batch.args();
  args.q_offsets.shape[0] = 3;
  const status s = aot_ragged_paged_prefill::run(args);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("q_offsets: expected 4 offsets (batch + 1) (from page_table), got 3"));
  CHECK(nothing_written(batch));
}

TEST_CASE("int8 KV cache: a scale tensor of the wrong shape is refused, naming it", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_paged_int8_kv_sinks::description, {1, 2}, {9, 30});
  attention_args args = batch.args();
  args.v_scale.shape[2] = 1;
  args.v_scale.strides[1] = 1;
  const status s = aot_paged_int8_kv_sinks::run(args);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("v_scale: expected 2 kv heads, got 1"));
  CHECK(nothing_written(batch));
}

TEST_CASE("int8 KV cache: missing scales are refused, naming the feature that needs them", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_paged_int8_kv_sinks::description, {1, 2}, {9, 30});
  attention_args args = batch.args();
  args.k_scale = {};
  const status s = aot_paged_int8_kv_sinks::run(args);
  CHECK(s.code() == error_code::null_pointer);
  CHECK_THAT(s.message(), StartsWith("k_scale: data pointer is null"));
  CHECK(nothing_written(batch));
}

TEST_CASE("KV cache: the page table on a device is refused, since the runtime reads it", "[kv_cache][errors]") {
  sequence_batch batch = poisoned_batch(aot_paged_decode::description, {1, 1}, {20, 5});
  attention_args args = batch.args();
  args.page_table.device = device_kind::cuda;
  const status s = aot_paged_decode::run(args);
  CHECK(s.code() == error_code::wrong_device);
  CHECK_THAT(s.message(), StartsWith("page_table: is on cuda; the runtime reads it"));
  CHECK(nothing_written(batch));
}

TEST_CASE("paged KV cache: sequences with no keys write output 0 and log-sum-exp -inf, or the sink's logit",
          "[kv_cache]") {
  for (const attention_desc& desc : {aot_paged_decode::description, aot_paged_int8_kv_sinks::description}) {
    sequence_batch batch = poisoned_batch(desc, {1, 1}, {0, 0});
    const status s = desc == aot_paged_decode::description ? aot_paged_decode::run(batch.args())
                                                           : aot_paged_int8_kv_sinks::run(batch.args());
    REQUIRE(s.ok());
    CHECK(compare_sequences_with_reference(batch).ok);
  }
}

TEST_CASE("paged KV cache: pools past 2^31 elements are read through 64-bit addresses", "[kv_cache][limits]") {
  // f32 pools of 2^31 elements and a few pages more, mapped without reserving memory: only the
  // sequences' pages, at the end of the pools, are ever touched.
  const attention_desc desc = aot_paged_decode::description;
  sequence_batch batch = poisoned_batch(desc, {1, 1}, {40, 17});
  const std::size_t page_elements = std::size_t(16) * desc.effective_kv_heads() * desc.qk_head_dim;
  const std::size_t first_page = (std::size_t(1) << 31) / page_elements;
  const std::size_t pages = first_page + std::size_t(batch.num_pages);
  const std::size_t bytes = pages * page_elements * sizeof(float);
  void* k = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void* v = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(k != MAP_FAILED);
  REQUIRE(v != MAP_FAILED);
  std::memcpy(static_cast<float*>(k) + first_page * page_elements, batch.k.data(), batch.k.size());
  std::memcpy(static_cast<float*>(v) + first_page * page_elements, batch.v.data(), batch.v.size());
  for (std::int32_t& page : batch.page_table)
    if (page >= 0 && page < batch.num_pages) page += std::int32_t(first_page);
  attention_args args = batch.args();
  args.k.data = k;
  args.v.data = v;
  args.k.shape[0] = args.v.shape[0] = std::int64_t(pages);
  const status s = aot_paged_decode::run(args);
  munmap(k, bytes);
  munmap(v, bytes);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(compare_sequences_with_reference(batch).ok);
}
