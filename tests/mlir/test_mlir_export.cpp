// The MLIR export of each description, verified by mlir-opt-14, lowered and compiled with the
// documented MLIR 14 pipeline, and run: its results match the float64 reference and the Halide
// kernel (JIT, general variant) across the configuration matrix. A failure names the configuration.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attngen/builtins.hpp"
#include "attngen/mlir/emit_mlir.hpp"
#include "codegen/jit_runner.hpp"
#include "examples/03_custom_modifier/kernels.hpp"
#include "mlir/mlir_kernel.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

using namespace attngen;
using namespace attngen::mod;
using namespace attngen::testing;

namespace {

const auto gqa = attention().heads(4).kv_heads(2).head_dim(64);
constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
constexpr auto bias_table = tensor<capture_type::f32>("bias_table", dim::heads, dim::fixed(9));
constexpr auto cap = scalar("cap");

// Lq x Lk pairs: decoding, Lq < Lk, Lq > Lk (fully masked rows under bottom-right causality).
struct shape {
  int batch, query_length, key_length;
};
const std::vector<shape> shapes = {{1, 1, 1}, {2, 1, 19}, {2, 7, 17}, {1, 17, 7}};

// Every output and lse of the MLIR module, against float64 and against the Halide kernel, whose
// results stand in as the reference at the same tolerance. bf16 runs as bits (LLVM 14 has no bf16
// on x86); its bf16-typed module is verified.
void check_mlir_export(const attention_desc& desc) {
  const std::string verifier_message = verify_mlir(mlir_export::emit_mlir(desc));
  INFO("mlir-opt-14: " << verifier_message);
  REQUIRE(verifier_message.empty());
  mlir_export::mlir_options options;
  options.bfloat16_as_bits = desc.element_type == dtype::bf16;
  const mlir_kernel exported(desc, options);
  jit_kernel halide(desc);
  std::uint32_t seed = 7;
  for (const shape& s : shapes) {
    const auto problem = make_random_problem(desc, s.batch, s.query_length, s.key_length, seed++);
    const auto mlir = exported.run(problem);
    const auto against_float64 = compare_with_reference(problem, reference_attention(problem), mlir.output, mlir.lse);
    INFO(problem.name() << ": MLIR vs float64: max error " << against_float64.max_output_error << " (tolerance "
                        << against_float64.output_tolerance << ") " << against_float64.first_failure);
    CHECK(against_float64.ok);
    const auto halide_result = halide.run(problem);
    reference_result halide_as_reference{{halide_result.output.begin(), halide_result.output.end()},
                                         {halide_result.lse.begin(), halide_result.lse.end()}};
    const auto against_halide = compare_with_reference(problem, halide_as_reference, mlir.output, mlir.lse);
    INFO(problem.name() << ": MLIR vs Halide: max difference " << against_halide.max_output_error << " "
                        << against_halide.first_failure);
    CHECK(against_halide.ok);
  }
}

}  // namespace

TEST_CASE("MLIR export of MHA H4 D32 matches float64 and Halide", "[mlir]") {
  check_mlir_export(attention().heads(4).head_dim(32));
}

TEST_CASE("MLIR export of MQA H4 KVH1 D64 with explicit scale 0.5 matches float64 and Halide", "[mlir]") {
  check_mlir_export(attention().heads(4).kv_heads(1).head_dim(64).scale(0.5f));
}

TEST_CASE("MLIR export of GQA H6 KVH2 causal top-left with LSE matches float64 and Halide", "[mlir]") {
  check_mlir_export(attention().heads(6).kv_heads(2).head_dim(32).causal(top_left).return_lse());
}

TEST_CASE("MLIR export of GQA causal bottom-right with LSE (fully masked rows) matches float64 and Halide", "[mlir]") {
  check_mlir_export(gqa.causal(bottom_right).return_lse());
}

TEST_CASE("MLIR export of each additive mask shape matches float64 and Halide", "[mlir]") {
  for (const mask_shape m : {mask_shape::lq_lk, mask_shape::h_lq_lk, mask_shape::b_h_lq_lk, mask_shape::b_1_lq_lk}) {
    INFO("mask shape " << int(m));
    check_mlir_export(gqa.additive_mask(m));
  }
}

TEST_CASE("MLIR export of key padding, true means ignore and true means keep, matches float64 and Halide", "[mlir]") {
  check_mlir_export(gqa.key_padding_mask(true_means_ignore).return_lse());
  check_mlir_export(gqa.key_padding_mask(true_means_keep));
}

TEST_CASE("MLIR export of head dims 80/24 with every option at once matches float64 and Halide", "[mlir]") {
  check_mlir_export(attention()
                        .heads(4)
                        .kv_heads(2)
                        .head_dim(80)
                        .v_head_dim(24)
                        .causal(bottom_right)
                        .additive_mask(mask_shape::b_1_lq_lk)
                        .key_padding_mask(true_means_ignore)
                        .return_lse());
}

TEST_CASE("MLIR export in f16 and bf16 (as bits when run) matches float64 and Halide", "[mlir]") {
  check_mlir_export(gqa.element(dtype::f16).causal(top_left).return_lse());
  check_mlir_export(gqa.element(dtype::bf16).additive_mask(mask_shape::lq_lk));
}

TEST_CASE("MLIR export of built-in modifiers (sliding window, ALiBi, softcap) matches float64 and Halide", "[mlir]") {
  check_mlir_export(gqa.mask_mod(sliding_window(5, 2)));
  check_mlir_export(attention().heads(6).kv_heads(3).head_dim(32).causal(top_left).score_mod(alibi(6)));
  check_mlir_export(gqa.score_mod(softcap(2.5f)));
}

TEST_CASE("MLIR export of modifiers reading captured tensors and scalars matches float64 and Halide", "[mlir]") {
  check_mlir_export(gqa.additive_mask(mask_shape::h_lq_lk)
                        .key_padding_mask(true_means_ignore)
                        .return_lse()
                        .capture(document)
                        .capture(cap)
                        .mask_mod(document_mask(document) && causal_mask(bottom_right))
                        .score_mod(softcap(cap)));
  check_mlir_export(gqa.capture(bias_table).score_mod(relative_position_bias(bias_table, 4)));
  check_mlir_export(example::event_attention_description);
}

TEST_CASE("MLIR export of custom integer division, abs, select, min and max matches float64 and Halide", "[mlir]") {
  check_mlir_export(gqa.mask_mod(kv / 8 == q / 8 || abs(q - kv) / 3 * 3 == abs(q - kv) || (q - 20) / -3 == 2)
                        .score_mod(select(h == 0, max(score, -0.5f), min(score * 2.0f, to_float(q - kv) * 0.25f))));
}

TEST_CASE("MLIR export refuses an invalid description, naming the rule", "[mlir]") {
  CHECK_THROWS_WITH(mlir_export::emit_mlir(attention().heads(4).kv_heads(3).head_dim(32)),
                    Catch::Matchers::Contains("heads must be a multiple of kv_heads"));
}
