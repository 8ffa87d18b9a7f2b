// The vector decoding path (attngen/vector_decode/decode_task.hpp) against the float64 reference,
// sequence by sequence of a batch (support/sequence_batch.hpp: shuffled and shared pages, NaN past each
// sequence's keys): compiled for this build's target and run directly, and through the runtime on this
// CPU's AVX-512 where it has it; and which calls the runtime gives it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attngen/runtime/detail/vector_decode.hpp"
#include "attngen/vector_decode/call.hpp"
#include "attngen/vector_decode/decode_task.hpp"
#include "support/compare.hpp"
#include "support/sequence_batch.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

struct decode_case {
  std::string name;
  attention_desc desc;
  std::vector<int> queries, keys;
};

const std::vector<decode_case>& decode_cases() {
  static const std::vector<decode_case> cases = {
      {"paged f32 GQA H8 KVH2 D64, pages of 16, bottom-right, LSE",
       attention().heads(8).kv_heads(2).head_dim(64).paged_kv(16).kv_element(dtype::f32).causal(bottom_right).return_lse(),
       {1, 1, 1, 1, 1, 1, 1},
       {0, 1, 15, 16, 17, 300, 1100}},
      {"paged bf16 GQA H32 KVH8 D128, pages of 16 (decode_paged's heads)",
       attention().heads(32).kv_heads(8).head_dim(128).paged_kv(16).kv_element(dtype::bf16).causal(bottom_right),
       {1, 1, 1, 1},
       {255, 512, 513, 1030}},
      {"dense kv lengths int8 MHA H4 D128, 2 queries, not causal",
       attention().heads(4).head_dim(128).kv_lengths().kv_element(dtype::i8),
       {2, 2, 2},
       {1, 40, 600}},
      {"dense kv lengths f16 H2 KVH1 D256, 2 queries, top-left causal, LSE",
       attention().heads(2).kv_heads(1).head_dim(256).kv_lengths().kv_element(dtype::f16).causal(top_left).return_lse(),
       {2, 2, 2},
       {0, 5, 70}},
      {"paged int8 MHA H2 D192, pages of 64, 4 queries, bottom-right (rows with no key), LSE, scale 0.3",
       attention().heads(2).head_dim(192).paged_kv(64).kv_element(dtype::i8).causal(bottom_right).scale(0.3f).return_lse(),
       {4, 4, 4},
       {3, 64, 200}},
      {"ragged f32 GQA H4 KVH1 D80 over pages of 1, sinks, LSE",
       attention().heads(4).kv_heads(1).head_dim(80).ragged_queries().paged_kv(1).attention_sinks().return_lse(),
       {1, 0, 2, 2},
       {5, 9, 1, 33}},
      {"paged f16 GQA H16 KVH2 D96, pages of 256 (groups of 8), bottom-right",
       attention().heads(16).kv_heads(2).head_dim(96).paged_kv(256).kv_element(dtype::f16).causal(bottom_right),
       {1, 1, 1},
       {1000, 256, 257}},
      {"paged bf16 GQA H32 KVH8 D128, pages of 16, 4 speculative queries (16 rows), bottom-right",
       attention().heads(32).kv_heads(8).head_dim(128).paged_kv(16).kv_element(dtype::bf16).causal(bottom_right),
       {4, 4, 4, 4},
       {3, 64, 300, 1030}},
      {"dense kv lengths f32 MQA H32 KVH1 D64, 2 queries (64 rows), top-left causal, LSE",
       attention().heads(32).kv_heads(1).head_dim(64).kv_lengths().causal(top_left).return_lse(),
       {2, 2},
       {1, 200}},
      {"paged int8 GQA H16 KVH2 D128 (groups of 8), pages of 32, 3 queries (24 rows), bottom-right, LSE",
       attention().heads(16).kv_heads(2).head_dim(128).paged_kv(32).kv_element(dtype::i8).causal(bottom_right)
           .return_lse(),
       {3, 3, 3},
       {2, 33, 700}},
      {"ragged f16 GQA H8 KVH2 D64 over pages of 8, 0 to 9 queries (0 to 36 rows), bottom-right, sinks",
       attention().heads(8).kv_heads(2).head_dim(64).ragged_queries().paged_kv(8).kv_element(dtype::f16)
           .causal(bottom_right).attention_sinks(),
       {1, 9, 0, 5},
       {10, 9, 4, 300}},
  };
  return cases;
}

void poison_outputs(sequence_batch& batch) {
  std::memset(batch.output.data(), 0xff, batch.output.size());
  std::fill(batch.lse.begin(), batch.lse.end(), std::numeric_limits<float>::quiet_NaN());
}

void check_against_reference(const sequence_batch& batch) {
  const comparison c = compare_sequences_with_reference(batch);
  INFO(c.first_failure);
  CHECK(c.ok);
  if (batch.desc.has_kv_scales()) {
    const comparison q = compare_sequences_with_unquantised(batch);
    INFO("against the values before quantisation: " << q.first_failure);
    CHECK(q.ok);
  }
}

// The path as this build's target compiles it, on this thread.
void run_here(vector_decode::call& call) {
  const vector_decode::params& p = call.p;
  std::vector<unsigned char> scratch(vector_decode::scratch_for(p.head_dim, p.kv_heads, call.row_capacity).bytes + 64);
  const auto address = reinterpret_cast<std::uintptr_t>(scratch.data());
  vector_decode::run_worker(&call, scratch.data() + (64 - address % 64) % 64);
  for (int b = 0; b < p.batch; ++b) vector_decode::merge_sequence(call, b);
}

constexpr detail::cpu_report avx512_cpu{.avx512_skylake_set = true};

}  // namespace

TEST_CASE("vector decoding compiled for the build's target matches the float64 reference per sequence",
          "[vector_decode][kv_cache]") {
  for (const decode_case& c : decode_cases()) {
    INFO(c.name << ", " << lengths_text(c.queries, c.keys));
    REQUIRE(vector_decode::refusal(c.desc) == nullptr);
    sequence_batch batch = make_sequence_batch(c.desc, c.queries, c.keys, 23);
    poison_outputs(batch);
    std::optional<vector_decode::call> call = detail::decode_call_of(c.desc, batch.args());
    REQUIRE(call.has_value());
    run_here(*call);
    check_against_reference(batch);
  }
}

TEST_CASE("vector decoding on this CPU's AVX-512, with and without VNNI, matches the float64 reference per sequence",
          "[vector_decode][kv_cache]") {
  const detail::cpu_report cpu = detail::this_cpu();
  if (!detail::has_vector_decoding() || !detail::runs_vector_decoding(cpu)) {
    WARN("this CPU has no AVX-512 (or the runtime was built without the path): its AVX-512 code cannot run here");
    return;
  }
  detail::cpu_report without_vnni = cpu;
  without_vnni.avx512_vnni = false;
  if (!cpu.avx512_vnni) WARN("this CPU has no AVX512-VNNI: the path's VNNI code cannot run here");
  for (const detail::cpu_report& instance : cpu.avx512_vnni ? std::vector{cpu, without_vnni} : std::vector{cpu})
    for (const decode_case& c : decode_cases()) {
      INFO((instance.avx512_vnni ? "with VNNI: " : "without VNNI: ") << c.name << ", "
                                                                    << lengths_text(c.queries, c.keys));
      sequence_batch batch = make_sequence_batch(c.desc, c.queries, c.keys, 29);
      poison_outputs(batch);
      std::optional<vector_decode::call> call = detail::vector_decode_call_of(c.desc, batch.args(), instance);
      REQUIRE(call.has_value());
      detail::run_vector_decoding(*call, instance);
      check_against_reference(batch);
    }
}

TEST_CASE("vector decoding runs only on a CPU reporting AVX-512's Skylake set", "[vector_decode][dispatch]") {
  const decode_case& c = decode_cases()[0];
  sequence_batch batch = make_sequence_batch(c.desc, c.queries, c.keys, 31);
  CHECK(detail::vector_decode_call_of(c.desc, batch.args(), avx512_cpu).has_value() == detail::has_vector_decoding());
  CHECK_FALSE(detail::vector_decode_call_of(c.desc, batch.args(), detail::cpu_report{}).has_value());
}

TEST_CASE("vector decoding leaves calls of more than 64 rows per kv head to the Halide code",
          "[vector_decode][dispatch]") {
  // GQA groups of 4: 16 queries are 64 rows, 17 are 68.
  const attention_desc desc = decode_cases()[0].desc;
  sequence_batch sixteen = make_sequence_batch(desc, {16, 16}, {20, 40}, 37);
  sequence_batch seventeen = make_sequence_batch(desc, {17, 17}, {20, 40}, 37);
  CHECK(detail::decode_call_of(desc, sixteen.args()).has_value());
  CHECK_FALSE(detail::decode_call_of(desc, seventeen.args()).has_value());
}

TEST_CASE("vector decoding keeps as many rows per kv head as the call's longest sequence has",
          "[vector_decode][dispatch]") {
  // H8 KVH2, groups of 4: sequences of 1, 5 and 0 queries are 4, 20 and 0 rows.
  const attention_desc desc = decode_cases()[10].desc;
  sequence_batch batch = make_sequence_batch(desc, {1, 5, 0}, {8, 8, 8}, 41);
  const std::optional<vector_decode::call> call = detail::decode_call_of(desc, batch.args());
  REQUIRE(call.has_value());
  CHECK(call->row_capacity == 20);
}

TEST_CASE("vector decoding of a ragged batch counts each sequence's own rows", "[vector_decode][dispatch]") {
  const attention_desc desc = decode_cases()[5].desc;
  // H4 KVH1, groups of 4: 16 queries are 64 rows, 17 are 68.
  sequence_batch fits = make_sequence_batch(desc, {16, 0, 1}, {20, 4, 4}, 43);
  sequence_batch one_too_long = make_sequence_batch(desc, {1, 17, 1}, {4, 20, 4}, 43);
  CHECK(detail::decode_call_of(desc, fits.args()).has_value());
  CHECK_FALSE(detail::decode_call_of(desc, one_too_long.args()).has_value());
}

TEST_CASE("vector decoding refuses descriptions it does not compute", "[vector_decode][dispatch]") {
  const attention_desc base = decode_cases()[0].desc;
  CHECK(vector_decode::refusal(base) == nullptr);
  CHECK(vector_decode::refusal(base.kv_element(dtype::i8)) == nullptr);
  CHECK(vector_decode::refusal(base.element(dtype::bf16)) != nullptr);
  CHECK(vector_decode::refusal(base.key_padding_mask(padding_polarity::true_means_ignore)) != nullptr);
  CHECK(vector_decode::refusal(base.additive_mask(mask_shape::b_h_lq_lk)) != nullptr);
  CHECK(vector_decode::refusal(base.score_mod(mod::score * 0.5f)) != nullptr);
  CHECK(vector_decode::refusal(base.with_global_positions()) != nullptr);
  CHECK(vector_decode::refusal(base.head_dim(112)) != nullptr);
  CHECK(vector_decode::refusal(base.v_head_dim(32)) != nullptr);
  CHECK(vector_decode::refusal(attention().heads(128).kv_heads(1).head_dim(64).kv_lengths()) != nullptr);
}
