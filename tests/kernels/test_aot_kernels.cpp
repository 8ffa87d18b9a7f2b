// Kernels generated ahead of time by attngen_add_kernel (the path users take) match the float64
// reference, through the runtime's tensor views: the kernel aot_<name> of each configuration of the
// registry with AOT calls (support/configurations.hpp), at those calls.
#include <catch2/catch.hpp>

#include "aot_bf16_mqa.hpp"
#include "aot_gqa_causal.hpp"
#include "aot_math_modifiers.hpp"
#include "aot_modifiers.hpp"
#include "compiled_kernels.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"
#include "support/required_kernel.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

void check_aot(const compiled_kernel& kernel, const attention_desc& desc, const shape& s) {
  const auto problem = make_random_problem(desc, s.batch, s.query_length, s.key_length, 99);
  aot_call call(problem);
  const status result = kernel.run_operator(call.args());
  INFO(problem.name() << ": " << result.message());
  REQUIRE(result.ok());
  const auto c = compare_with_reference(problem, reference_attention(problem), call.output(), call.lse());
  INFO(c.first_failure);
  CHECK(c.ok);
}

void check_aot_sequences(const compiled_kernel& kernel, const attention_desc& desc, const sequence_lengths& lengths) {
  const std::vector<int> queries(lengths.queries.begin(), lengths.queries.end());
  const std::vector<int> keys(lengths.keys.begin(), lengths.keys.end());
  sequence_batch batch = make_sequence_batch(desc, queries, keys, 99);
  const status result = kernel.run_operator(batch.args());
  INFO(lengths_text(queries, keys) << ": " << result.message());
  REQUIRE(result.ok());
  const comparison c = compare_sequences_with_reference(batch);
  INFO(c.first_failure);
  CHECK(c.ok);
  if (desc.effective_kv_element() == dtype::i8) {
    const comparison q = compare_sequences_with_unquantised(batch);
    INFO("against the values before quantisation: " << q.first_failure);
    CHECK(q.ok);
  }
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    if (!c.aot_batches.empty())
      register_test_case(title(c) + ": the AOT kernel matches the float64 reference per sequence",
                         "[aot]" + std::string(c.tags), [&c] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "aot_");
                           for (const sequence_lengths& lengths : c.aot_batches)
                             check_aot_sequences(kernel, c.desc, lengths);
                         });
  for (const operator_configuration& c : operator_configurations)
    if (!c.aot.empty())
      register_test_case(title(c) + ": the AOT kernel matches the float64 reference at " + sizes_text(c.aot),
                         "[aot]" + std::string(c.tags), [&c] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "aot_");
                           for (const shape& s : c.aot) check_aot(kernel, c.desc, s);
                         });
  return true;
}();

}  // namespace

TEST_CASE("every AOT kernel of the suite is generated from the description of a configuration with AOT calls",
          "[aot]") {
  for (const compiled_kernel& kernel : compiled_kernels) {
    INFO("aot_" << kernel.configuration);
    CHECK(has_calls(kernel.configuration, backend::aot));
    CHECK(kernel.description_text == description_text_of(kernel.configuration));
  }
}

TEST_CASE("generated header's description rebuilds the same modifiers and captures from its C++ form",
          "[aot][modifiers]") {
  STATIC_REQUIRE(aot_modifiers::description.mask_modifier == description_of<"modifiers">().mask_modifier);
  STATIC_REQUIRE(aot_modifiers::description.score_modifier == description_of<"modifiers">().score_modifier);
  STATIC_REQUIRE(aot_modifiers::description.captures == description_of<"modifiers">().captures);
}

TEST_CASE("generated header's description rebuilds math modifiers, -infinity included, from its C++ form",
          "[aot][modifiers][math]") {
  STATIC_REQUIRE(aot_math_modifiers::description.mask_modifier == description_of<"math_modifiers">().mask_modifier);
  STATIC_REQUIRE(aot_math_modifiers::description.score_modifier == description_of<"math_modifiers">().score_modifier);
}

TEST_CASE("AOT kernel with modifiers refuses a captured tensor of the wrong type, naming it", "[aot][modifiers]") {
  const auto problem = make_random_problem(aot_modifiers::description, 1, 9, 9, 5);
  aot_call call(problem);
  attention_args args = call.args();
  args.captures[0].type = dtype::f32;
  const status s = aot_modifiers::run(args);
  CHECK(s.code() == error_code::wrong_dtype);
  CHECK_THAT(s.message(), Catch::Matchers::StartsWith("document: expected element type i32"));
}

TEST_CASE("AOT kernel with modifiers refuses a captured tensor of another length, naming where it comes from",
          "[aot][modifiers]") {
  const auto problem = make_random_problem(aot_modifiers::description, 1, 9, 9, 5);
  aot_call call(problem);
  attention_args args = call.args();
  args.captures[0].shape[1] = 8;
  const status s = aot_modifiers::run(args);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), Catch::Matchers::StartsWith("document: expected Lk 9 (from k), got 8"));
}

TEST_CASE("AOT kernel without modifiers refuses a captured tensor", "[aot][modifiers]") {
  const auto problem = make_random_problem(aot_bf16_mqa::description, 1, 3, 3, 5);
  aot_call call(problem);
  attention_args args = call.args();
  std::int32_t ids[3] = {};
  args.captures[0] = make_tensor(ids, dtype::i32, {1, 3});
  const status s = aot_bf16_mqa::run(args);
  CHECK(s.code() == error_code::unexpected_tensor);
  CHECK(s.message() ==
        "captures[0]: this kernel's description has no captured tensor in this slot, but a tensor was given");
}

TEST_CASE("generated header records the description, targets and version", "[aot]") {
  constexpr auto written = description_of<"gqa_causal">();
  STATIC_REQUIRE(aot_gqa_causal::description == validated<written.v_head_dim(128).kv_heads(8)>());
  CHECK(std::string(aot_gqa_causal::description_text).find("causal = top_left") != std::string::npos);
  CHECK(std::string(aot_gqa_causal::targets).find("avx512_skylake") != std::string::npos);
  CHECK(std::string(aot_gqa_causal::attngen_version) == ATTNGEN_TEST_VERSION);
}
