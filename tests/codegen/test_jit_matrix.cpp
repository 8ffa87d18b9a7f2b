// Every kernel configuration matches the float64 reference at awkward sizes, Lq != Lk included.
// Kernels are compiled through Halide's JIT from the same algorithm and CPU schedule as AOT builds.
#include <catch2/catch.hpp>

#include "codegen/matrix.hpp"

using namespace attngen;
using attngen::testing::awkward_lengths;
using attngen::testing::check_against_reference;

namespace {
const auto mha = attention().heads(4).head_dim(64);
const auto gqa_4_2 = attention().heads(4).kv_heads(2).head_dim(64);
}  // namespace

TEST_CASE("MHA H4 D64 matches the reference, batch 1 and 3", "[jit][matrix]") {
  check_against_reference(mha, awkward_lengths, {1, 3});
}

TEST_CASE("MQA H4 KVH1 D64 matches the reference", "[jit][matrix]") {
  check_against_reference(attention().heads(4).kv_heads(1).head_dim(64), awkward_lengths, {1, 3});
}

TEST_CASE("MQA H32 KVH1 D32 (32-row tiles, block scratch on the heap) matches the reference", "[jit][matrix]") {
  check_against_reference(attention().heads(32).kv_heads(1).head_dim(32), {1, 3, 530}, {1});
}

TEST_CASE("GQA H32 KVH8 D128 matches the reference", "[jit][matrix]") {
  check_against_reference(attention().heads(32).kv_heads(8).head_dim(128), {1, 7, 113, 512}, {1});
}

TEST_CASE("GQA H6 KVH2 (groups of 3) causal matches the reference", "[jit][matrix]") {
  check_against_reference(attention().heads(6).kv_heads(2).head_dim(64).causal(bottom_right), awkward_lengths, {1, 3});
}

TEST_CASE("causal top-left GQA H4 KVH2 D64 matches the reference", "[jit][matrix][causal]") {
  check_against_reference(gqa_4_2.causal(top_left), awkward_lengths, {1, 3});
}

TEST_CASE("causal bottom-right GQA H4 KVH2 D64 matches the reference, fully masked rows when Lk < Lq",
          "[jit][matrix][causal]") {
  check_against_reference(gqa_4_2.causal(bottom_right), awkward_lengths, {1, 3});
}

TEST_CASE("causal GQA H32 KVH8 D128 matches the reference", "[jit][matrix][causal]") {
  check_against_reference(attention().heads(32).kv_heads(8).head_dim(128).causal(top_left), {1, 113, 512}, {1});
}

TEST_CASE("additive mask (Lq, Lk) matches the reference", "[jit][matrix][mask]") {
  check_against_reference(gqa_4_2.additive_mask(mask_shape::lq_lk), awkward_lengths, {1, 3});
}

TEST_CASE("additive mask (H, Lq, Lk) matches the reference", "[jit][matrix][mask]") {
  check_against_reference(gqa_4_2.additive_mask(mask_shape::h_lq_lk), awkward_lengths, {1, 3});
}

TEST_CASE("additive mask (B, H, Lq, Lk) matches the reference", "[jit][matrix][mask]") {
  check_against_reference(gqa_4_2.additive_mask(mask_shape::b_h_lq_lk), awkward_lengths, {1, 3});
}

TEST_CASE("additive mask (B, 1, Lq, Lk) matches the reference", "[jit][matrix][mask]") {
  check_against_reference(gqa_4_2.additive_mask(mask_shape::b_1_lq_lk), awkward_lengths, {1, 3});
}

TEST_CASE("key padding mask, true means ignore, matches the reference", "[jit][matrix][mask]") {
  check_against_reference(gqa_4_2.key_padding_mask(true_means_ignore), awkward_lengths, {1, 3});
}

TEST_CASE("key padding mask, true means keep, matches the reference", "[jit][matrix][mask]") {
  check_against_reference(gqa_4_2.key_padding_mask(true_means_keep), awkward_lengths, {1, 3});
}

TEST_CASE("log-sum-exp output matches the reference, -inf for fully masked rows", "[jit][matrix][lse]") {
  check_against_reference(gqa_4_2.causal(bottom_right).return_lse(), awkward_lengths, {1, 3});
}

TEST_CASE("v_head_dim 32 differs from head_dim 64 and matches the reference", "[jit][matrix][dims]") {
  check_against_reference(gqa_4_2.v_head_dim(32), awkward_lengths, {1, 3});
}

TEST_CASE("head_dim 128 with v_head_dim 64 matches the reference", "[jit][matrix][dims]") {
  check_against_reference(attention().heads(4).kv_heads(2).head_dim(128).v_head_dim(64), awkward_lengths, {1});
}

TEST_CASE("head dims 80/24, not powers of two, match the reference", "[jit][matrix][dims]") {
  check_against_reference(gqa_4_2.head_dim(80).v_head_dim(24).causal(top_left), awkward_lengths, {1});
}

TEST_CASE("explicit scale 0.5 matches the reference", "[jit][matrix]") {
  check_against_reference(mha.scale(0.5f), awkward_lengths, {1});
}

TEST_CASE("every option at once matches the reference: GQA, causal, both masks, LSE", "[jit][matrix]") {
  check_against_reference(attention()
                              .heads(8)
                              .kv_heads(2)
                              .head_dim(64)
                              .v_head_dim(48)
                              .causal(bottom_right)
                              .additive_mask(mask_shape::b_h_lq_lk)
                              .key_padding_mask(true_means_ignore)
                              .return_lse(),
                          awkward_lengths, {1, 3});
}

// Decoding kernels cut the key range into splits of 512 keys merged at the end (flash-decoding):
// 257 and 769 keys end in a partial split, and causal and padded keys leave whole splits masked.
TEST_CASE("decoding merges uneven key splits: GQA causal bottom-right, key padding, LSE", "[jit][matrix][splits]") {
  check_against_reference(gqa_4_2.causal(bottom_right).key_padding_mask(true_means_ignore).return_lse(),
                          {1, 3, 257, 769}, {1, 2});
}

TEST_CASE("decoding merges key splits when causal top-left hides all but the first split", "[jit][matrix][splits]") {
  check_against_reference(mha.causal(top_left).return_lse(), {1, 2, 769}, {1});
}

TEST_CASE("bf16 inputs and output with float32 accumulation match the reference", "[jit][matrix][dtype]") {
  check_against_reference(gqa_4_2.causal(top_left).element(dtype::bf16), awkward_lengths, {1});
}

TEST_CASE("f16 inputs and output with float32 accumulation match the reference", "[jit][matrix][dtype]") {
  check_against_reference(gqa_4_2.additive_mask(mask_shape::lq_lk).element(dtype::f16), awkward_lengths, {1});
}

// Fat libraries also hold these targets; the dispatcher picks them on CPUs without AVX-512.
const auto every_option = attention()
                              .heads(8)
                              .kv_heads(2)
                              .head_dim(64)
                              .v_head_dim(48)
                              .causal(bottom_right)
                              .additive_mask(mask_shape::b_1_lq_lk)
                              .key_padding_mask(true_means_keep)
                              .return_lse();

TEST_CASE("AVX2 target: every option at once matches the reference", "[jit][matrix][targets]") {
  check_against_reference(every_option, awkward_lengths, {1, 3}, "x86-64-linux-avx2-fma-f16c");
}

TEST_CASE("baseline x86-64 target: every option at once matches the reference", "[jit][matrix][targets]") {
  check_against_reference(every_option, {1, 17, 113}, {2}, "x86-64-linux");
}

TEST_CASE("AVX2 target: bf16 GQA H32 KVH8 D128 matches the reference", "[jit][matrix][targets]") {
  check_against_reference(attention().heads(32).kv_heads(8).head_dim(128).element(dtype::bf16), {1, 113}, {1},
                          "x86-64-linux-avx2-fma-f16c");
}
