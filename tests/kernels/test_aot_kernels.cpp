// Kernels generated ahead of time by attngen_add_kernel (the path users take) match the float64
// reference, through the runtime's tensor views.
#include <catch2/catch.hpp>

#include "aot_all_options.hpp"
#include "aot_bf16_mqa.hpp"
#include "aot_gqa_causal.hpp"
#include "aot_modifiers.hpp"
#include "kernels/kernels.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

template <typename Kernel>
void check_aot(int batch, int query_length, int key_length) {
  const auto problem = make_random_problem(Kernel::description, batch, query_length, key_length, 99);
  aot_call call(problem);
  const status s = Kernel::run(call.args());
  INFO(problem.name() << ": " << s.message());
  REQUIRE(s.ok());
  const auto c = compare_with_reference(problem, reference_attention(problem), call.output(), call.lse());
  INFO(c.first_failure);
  CHECK(c.ok);
}

}  // namespace

TEST_CASE("AOT GQA 32/8 D128 causal (fat library) matches the reference", "[aot]") {
  check_aot<aot_gqa_causal>(1, 113, 113);
  check_aot<aot_gqa_causal>(3, 17, 7);
  check_aot<aot_gqa_causal>(1, 1, 512);
}

TEST_CASE("AOT kernel with every run-time tensor matches the reference", "[aot]") {
  check_aot<aot_all_options>(3, 17, 113);
  check_aot<aot_all_options>(1, 113, 17);
  check_aot<aot_all_options>(2, 1, 1);
}

TEST_CASE("AOT bf16 MQA with LSE matches the reference", "[aot]") {
  check_aot<aot_bf16_mqa>(1, 113, 512);
  check_aot<aot_bf16_mqa>(3, 7, 17);
}

TEST_CASE("AOT kernel with modifiers (document mask, causal mask, ALiBi, run-time softcap) matches the reference",
          "[aot][modifiers]") {
  check_aot<aot_modifiers>(2, 113, 113);
  check_aot<aot_modifiers>(1, 600, 600);
  check_aot<aot_modifiers>(3, 1, 17);
}

TEST_CASE("generated header's description rebuilds the same modifiers and captures from its C++ form",
          "[aot][modifiers]") {
  STATIC_REQUIRE(aot_modifiers::description.mask_modifier == test_kernels::modifiers.mask_modifier);
  STATIC_REQUIRE(aot_modifiers::description.score_modifier == test_kernels::modifiers.score_modifier);
  STATIC_REQUIRE(aot_modifiers::description.captures == test_kernels::modifiers.captures);
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
  STATIC_REQUIRE(aot_gqa_causal::description == validated<test_kernels::gqa_causal.v_head_dim(128).kv_heads(8)>());
  CHECK(std::string(aot_gqa_causal::description_text).find("causal = top_left") != std::string::npos);
  CHECK(std::string(aot_gqa_causal::targets).find("avx512_skylake") != std::string::npos);
  CHECK(std::string(aot_gqa_causal::attngen_version) == ATTNGEN_TEST_VERSION);
}
