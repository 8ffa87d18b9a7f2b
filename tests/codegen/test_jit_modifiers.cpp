// Score and mask modifiers (the built-ins, written with the DSL, and custom ones) match the float64
// reference, which evaluates the same graphs with its own interpreter, over awkward sizes.
#include <catch2/catch.hpp>

#include "attngen/builtins.hpp"
#include "codegen/matrix.hpp"
#include "examples/03_custom_modifier/kernels.hpp"

using namespace attngen;
using namespace attngen::mod;
using attngen::testing::awkward_lengths;
using attngen::testing::check_against_reference;

namespace {
const auto gqa = attention().heads(4).kv_heads(2).head_dim(64);
constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
constexpr auto prefix = tensor<capture_type::i32>("prefix", dim::batch);
constexpr auto bias_table = tensor<capture_type::f32>("bias_table", dim::heads, dim::fixed(9));
constexpr auto cap = scalar("cap");
}  // namespace

TEST_CASE("mask_mod causal top-left GQA H4 KVH2 matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.mask_mod(causal_mask(top_left)), awkward_lengths, {1, 3});
}

TEST_CASE("mask_mod causal bottom-right GQA H4 KVH2 matches the reference, Lq != Lk", "[jit][modifiers]") {
  check_against_reference(gqa.mask_mod(causal_mask(bottom_right)), awkward_lengths, {1, 2});
}

TEST_CASE("mask_mod sliding window (left 5, right 2) matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.mask_mod(sliding_window(5, 2)), awkward_lengths, {1, 2});
}

TEST_CASE("mask_mod sliding window 64 with causal top-left matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.causal(top_left).mask_mod(sliding_window(64, 0)), {1, 17, 300, 700}, {1});
}

TEST_CASE("score_mod ALiBi H6 KVH3 causal matches the reference", "[jit][modifiers]") {
  check_against_reference(attention().heads(6).kv_heads(3).head_dim(32).causal(top_left).score_mod(alibi(6)),
                          awkward_lengths, {1, 2});
}

TEST_CASE("score_mod softcap 2.5 matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.score_mod(softcap(2.5f)), awkward_lengths, {1, 2});
}

TEST_CASE("score_mod softcap with a run-time scalar cap matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.capture(cap).score_mod(softcap(cap)), awkward_lengths, {1, 2});
}

TEST_CASE("mask_mod prefix-LM with per-batch prefix lengths matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.capture(prefix).mask_mod(prefix_lm(prefix)), awkward_lengths, {1, 3});
}

TEST_CASE("mask_mod document masking of packed sequences matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.capture(document).mask_mod(document_mask(document)), awkward_lengths, {1, 3});
}

TEST_CASE("mask_mod document masking through a fat library's visibility table (AVX2 kernel, its slice from the "
          "baseline target's finer tiles) matches the reference",
          "[jit][modifiers][targets]") {
  check_against_reference(gqa.capture(document).mask_mod(document_mask(document)), awkward_lengths, {2},
                          "x86-64-linux-avx2-fma-f16c", "x86-64-linux");
}

TEST_CASE("mask_mod reading a per-head table (a visibility table per kv head) matches the reference",
          "[jit][modifiers]") {
  // Head h sees keys at most 20 x bias_table[h, 0] behind the query (a window of its own), none ahead.
  check_against_reference(gqa.capture(bias_table).mask_mod(kv <= q && to_float(q - kv) <= bias_table(h, 0) * 20.0f),
                          awkward_lengths, {1, 2});
}

TEST_CASE("score_mod learned relative-position bias table matches the reference", "[jit][modifiers]") {
  check_against_reference(gqa.capture(bias_table).score_mod(relative_position_bias(bias_table, 4)), awkward_lengths,
                          {1, 2});
}

TEST_CASE("score_mod reading a table through a per-key index tensor matches the reference", "[jit][modifiers]") {
  // bucket(b, kv), a read at the key alone, is staged once per key block in the variants that stage
  // such reads; it indexes a read at the head, which is not.
  constexpr auto bucket = tensor<capture_type::i32>("bucket", dim::batch, dim::key_length);
  const auto desc = gqa.capture(bias_table).capture(bucket).score_mod(score + bias_table(h, bucket(b, kv)));
  check_against_reference(desc, awkward_lengths, {1, 2});
}

TEST_CASE("score_mod and mask_mod together with the additive mask, padding and LSE match the reference",
          "[jit][modifiers]") {
  const auto desc = gqa.additive_mask(mask_shape::h_lq_lk)
                        .key_padding_mask(true_means_ignore)
                        .return_lse()
                        .capture(document)
                        .capture(cap)
                        .mask_mod(document_mask(document) && causal_mask(bottom_right))
                        .score_mod(softcap(cap));
  check_against_reference(desc, awkward_lengths, {1, 2});
}

TEST_CASE("custom modifiers: integer division, abs, select, min and max match the reference", "[jit][modifiers]") {
  // Keys in the same 8-wide chunk as the query or a multiple of 3 away; scores bent by a per-head
  // piecewise function.
  const auto desc = gqa.mask_mod(kv / 8 == q / 8 || abs(q - kv) / 3 * 3 == abs(q - kv))
                        .score_mod(select(h == 0, max(score, -0.5f), min(score * 2.0f, to_float(q - kv) * 0.25f)));
  check_against_reference(desc, awkward_lengths, {1, 2});
}

TEST_CASE("integer division by a negative number rounds down, as by a positive one", "[jit][modifiers]") {
  // (q - 20) / -3 == 2 holds for q in 12..14 rounding down, for q in 14..16 rounding toward zero.
  const auto desc = gqa.mask_mod(kv <= q && ((q - 20) / -3 == 2 || (kv - 5) / -2 >= -1));
  check_against_reference(desc, {1, 17, 30}, {1});
}

TEST_CASE("modifiers in bf16 with the single-query and short-key variants match the reference", "[jit][modifiers]") {
  check_against_reference(gqa.element(dtype::bf16).score_mod(alibi(4)).mask_mod(sliding_window(9, 0)), {1, 3, 113},
                          {2});
}

TEST_CASE("example 03's custom modifier (timestamped events, H8 KVH2 D64) matches the reference", "[jit][modifiers]") {
  check_against_reference(example::event_attention_description, awkward_lengths, {1, 2});
}
