// The backward pass of kernels generated ahead of time (attngen_add_kernel, descriptions with
// .with_backward()), through the runtime: for each configuration of the registry with AOT calls and a
// backward, the generated forward's output and log-sum-exp, then the generated backward's gradients
// against the float64 reference's; and the backward's argument checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "aot_backward_softcap_sinks.hpp"
#include "attngen/runtime/detail/variants.hpp"
#include "compiled_kernels.hpp"
#include "kernels/aot_backward_call.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_backward.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"
#include "support/required_kernel.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

void check_aot_backward(const compiled_kernel& kernel, const attention_desc& desc, const shape& s) {
  const attention_problem p = make_random_problem(desc, s.batch, s.query_length, s.key_length, 99);
  aot_call forward(p);
  REQUIRE(kernel.run_operator(forward.args()).ok());
  const std::vector<float> d_output = make_random_output_gradient(p, 100);
  aot_backward_call backward(p, forward, d_output);
  const status result = kernel.run_backward(backward.args());
  INFO(p.name() << ": " << result.message());
  REQUIRE(result.ok());
  const reference_gradients expected = reference_attention_backward(p, d_output);
  for (const std::string& failure : gradient_failures(p, expected, backward.gradients())) CHECK(failure == "");
}

const compiled_kernel& backward_kernel() {
  for (const compiled_kernel& kernel : compiled_kernels)
    if (kernel.run_backward != nullptr) return kernel;
  FAIL("tests/CMakeLists.txt generates no AOT kernel with a backward pass");
  throw;
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    if (!c.aot.empty() && c.desc.backward)
      register_test_case(title(c) + ": the AOT kernel's backward matches the float64 gradients at " + sizes_text(c.aot),
                         "[aot][backward]" + std::string(c.tags), [&c] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "aot_");
                           REQUIRE(kernel.run_backward != nullptr);
                           for (const shape& s : c.aot) check_aot_backward(kernel, c.desc, s);
                         });
  return true;
}();

}  // namespace

TEST_CASE("AOT backward refuses a dk of the wrong shape, naming it, and writes nothing", "[aot][backward]") {
  const compiled_kernel& kernel = backward_kernel();
  const attention_desc& desc = operator_configuration_named(kernel.configuration)->desc;
  const attention_problem p = make_random_problem(desc, 1, 5, 9, 3);
  aot_call forward(p);
  REQUIRE(kernel.run_operator(forward.args()).ok());
  aot_backward_call backward(p, forward, make_random_output_gradient(p, 4));
  backward.fill_gradients(7.0f);
  attention_backward_args args = backward.args();
  args.dk.shape[1] = 8;
  const status s = kernel.run_backward(args);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), Catch::Matchers::StartsWith("dk:"));
  const std::vector<float> dq = backward.dq();
  CHECK(std::all_of(dq.begin(), dq.end(), [](float x) { return x == 7.0f; }));
}

TEST_CASE("AOT backward with no queries writes zero key and value gradients", "[aot][backward]") {
  const compiled_kernel& kernel = backward_kernel();
  const attention_desc& desc = operator_configuration_named(kernel.configuration)->desc;
  const attention_problem p = make_random_problem(desc, 2, 0, 9, 3);
  aot_call forward(p);
  aot_backward_call backward(p, forward, make_random_output_gradient(p, 4));
  backward.fill_gradients(7.0f);
  REQUIRE(kernel.run_backward(backward.args()).ok());
  const std::vector<float> dk = backward.dk(), dv = backward.dv();
  CHECK(std::all_of(dk.begin(), dk.end(), [](float x) { return x == 0.0f; }));
  CHECK(std::all_of(dv.begin(), dv.end(), [](float x) { return x == 0.0f; }));
}

TEST_CASE("AOT backward's typed call writes the same gradients as its args call", "[aot][backward]") {
  const attention_desc& desc = aot_backward_softcap_sinks::description;
  const attention_problem p = make_random_problem(desc, 2, 17, 23, 5);
  aot_call forward(p);
  REQUIRE(aot_backward_softcap_sinks::run(forward.args()).ok());
  const std::vector<float> d_output = make_random_output_gradient(p, 6);
  aot_backward_call by_args(p, forward, d_output), typed(p, forward, d_output);
  REQUIRE(aot_backward_softcap_sinks::backward(by_args.args()).ok());
  const attention_backward_args a = typed.args();
  REQUIRE(aot_backward_softcap_sinks::backward(a.q, a.k, a.v, a.sinks, a.key_padding, a.scalars[0], a.output, a.lse,
                                               a.d_output, a.dq, a.dk, a.dv, a.d_sinks, a.d_scalars)
              .ok());
  CHECK(typed.dq() == by_args.dq());
  CHECK(typed.dk() == by_args.dk());
  CHECK(typed.dv() == by_args.dv());
  CHECK(typed.d_sinks() == by_args.d_sinks());
  CHECK(typed.d_scalars() == by_args.d_scalars());
}

TEST_CASE("AOT backward writes the same bits with 1, 2 and 8 threads, in one pass and in two", "[aot][backward]") {
  const attention_desc& desc = aot_backward_softcap_sinks::description;
  // 2 batches of 2 kv heads: 4 one-pass tasks, one pass on 1 and 2 threads, two on 8.
  const attention_problem p = make_random_problem(desc, 2, 70, 90, 8);
  const std::int64_t tasks = 2 * desc.effective_kv_heads();
  REQUIRE(choose_backward_passes(tasks, 2) == backward_passes::one);
  REQUIRE(choose_backward_passes(tasks, 8) == backward_passes::two);
  aot_call forward(p);
  REQUIRE(aot_backward_softcap_sinks::run(forward.args()).ok());
  const std::vector<float> d_output = make_random_output_gradient(p, 9);
  std::vector<std::vector<float>> gradients;
  for (int threads : {1, 2, 8}) {
    set_num_threads(threads);
    aot_backward_call call(p, forward, d_output);
    REQUIRE(aot_backward_softcap_sinks::backward(call.args()).ok());
    std::vector<float> all = call.dq();
    for (const auto& part : {call.dk(), call.dv(), call.d_sinks(), call.d_scalars()})
      all.insert(all.end(), part.begin(), part.end());
    gradients.push_back(all);
  }
  set_num_threads(0);
  CHECK(gradients[1] == gradients[0]);
  CHECK(gradients[2] == gradients[0]);
}
