// The MLIR export of each configuration of the registry with MLIR calls (support/configurations.hpp),
// verified by mlir-opt-14, lowered and compiled with the documented MLIR 14 pipeline, and run: its
// results match the float64 reference and the Halide kernel (JIT, general variant).
#include <catch2/catch.hpp>

#include <string>

#include "attngen/mlir/emit_mlir.hpp"
#include "codegen/jit_runner.hpp"
#include "mlir/mlir_kernel.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

// Every output and lse of the MLIR module, against float64 and against the Halide kernel, whose
// results stand in as the reference at the same tolerance. bf16 runs as bits (LLVM 14 has no bf16
// on x86); its bf16-typed module is verified.
void check_mlir_export(const attention_desc& desc, const short_list<shape, 4>& shapes) {
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

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    if (!c.mlir.empty())
      register_test_case(title(c) + ": the MLIR export matches float64 and the Halide kernel at " + sizes_text(c.mlir),
                         "[mlir]" + std::string(c.tags), [&c] { check_mlir_export(c.desc, c.mlir); });
  return true;
}();

}  // namespace

TEST_CASE("MLIR export refuses an invalid description, naming the rule", "[mlir]") {
  CHECK_THROWS_WITH(mlir_export::emit_mlir(attention().heads(4).kv_heads(3).head_dim(32)),
                    Catch::Matchers::Contains("heads must be a multiple of kv_heads"));
}
