// Module backward passes through the real path (attngen_add_kernel, the generated library, the
// runtime): the kernel aot_<name> of each module configuration of the registry with a backward and AOT
// calls, its gradients against PyTorch's autograd at those calls; the gradients written into a
// state_dict's layout; the empty call; the thread-count determinism.

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "aot_module_backward_defaults.hpp"
#include "attngen/runtime/detail/variants.hpp"
#include "compiled_kernels.hpp"
#include "kernels/aot_module_call.hpp"
#include "module/module_backward_check.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configuration_tests.hpp"
#include "support/element_codec.hpp"
#include "support/required_kernel.hpp"

namespace attngen::testing {
namespace {

void check_gradients(const compiled_kernel& kernel, const module_configuration& c) {
  const std::vector<module_problem> problems = make_module_backward_problems(c.desc, {c.aot.begin(), c.aot.end()}, 21);
  const std::vector<module_gradients> expected = pytorch_gradients(problems);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    aot_module_call call(problems[n]);
    const status s = kernel.run_module_backward(call.backward_args());
    INFO(problems[n].name() << ": " << s.message());
    REQUIRE(s.ok());
    check_module_gradients(problems[n], call.gradients(), expected[n]);
  }
}

const bool registered = [] {
  for (const module_configuration& c : module_configurations)
    if (c.desc.backward && !c.aot.empty())
      register_test_case(title(c) + ": the AOT module's backward matches PyTorch's autograd at " + sizes_text(c.aot),
                         "[aot][module][backward]", [&c] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "aot_");
                           REQUIRE(kernel.run_module_backward != nullptr);
                           check_gradients(kernel, c);
                         });
  return true;
}();

module_problem defaults_problem(int batch, int queries, int keys) {
  module_problem p = make_random_module_problem(aot_module_backward_defaults::description, batch, queries, keys, 5);
  add_output_gradient(p, 6);
  return p;
}

}  // namespace

TEST_CASE("AOT module backward writes the weights' gradients into a state_dict's packed in_proj_weight",
          "[aot][module][backward]") {
  const mha_desc& d = aot_module_backward_defaults::description;
  const module_problem p = defaults_problem(2, 9, 11);
  aot_module_call separate(p);
  REQUIRE(aot_module_backward_defaults::backward(separate.backward_args()).ok());
  // The same call with d_weights viewing one buffer per state_dict key, packed as PyTorch packs them.
  aot_module_call packed(p);
  mha_backward_args args = packed.backward_args();
  const std::size_t E = std::size_t(d.embed), bytes = size_of(d.element_type);
  std::vector<std::uint8_t> in_proj_weight(3 * E * E * bytes), in_proj_bias(3 * E * bytes), out_weight(E * E * bytes),
      out_bias(E * bytes);
  const state_dict_gradient state[] = {{"in_proj_weight", in_proj_weight.data()},
                                       {"in_proj_bias", in_proj_bias.data()},
                                       {"out_proj.weight", out_weight.data()},
                                       {"out_proj.bias", out_bias.data()}};
  REQUIRE(gradients_from_state_dict(d, state, args.d_weights).ok());
  REQUIRE(aot_module_backward_defaults::backward(args).ok());
  const auto expected = separate.gradients();
  std::vector<float> expected_in_proj = expected.at("d_q_weight");
  for (const char* name : {"d_k_weight", "d_v_weight"})
    expected_in_proj.insert(expected_in_proj.end(), expected.at(name).begin(), expected.at(name).end());
  CHECK(decode(d.element_type, in_proj_weight.data(), 3 * E * E) == expected_in_proj);
  CHECK(decode(d.element_type, out_bias.data(), E) == expected.at("d_out_bias"));
}

TEST_CASE("AOT module backward with no queries writes zero gradients", "[aot][module][backward]") {
  module_problem p = defaults_problem(2, 0, 7);
  aot_module_call call(p);
  mha_backward_args args = call.backward_args();
  REQUIRE(aot_module_backward_defaults::backward(args).ok());
  for (const auto& [name, gradient] : call.gradients()) {
    INFO(name);
    CHECK(std::all_of(gradient.begin(), gradient.end(), [](float x) { return x == 0.0f; }));
  }
}

TEST_CASE("AOT module backward writes the same bits with 1, 2 and 8 threads, in one pass and in two",
          "[aot][module][backward]") {
  // One batch of 4 kv heads: 4 one-pass tasks, one pass on 1 and 2 threads, two on 8.
  const module_problem p = defaults_problem(1, 40, 50);
  const std::int64_t tasks = aot_module_backward_defaults::description.effective_kv_heads();
  REQUIRE(choose_backward_passes(tasks, 2) == backward_passes::one);
  REQUIRE(choose_backward_passes(tasks, 8) == backward_passes::two);
  std::vector<std::map<std::string, std::vector<float>>> runs;
  for (int threads : {1, 2, 8}) {
    set_num_threads(threads);
    aot_module_call call(p);
    REQUIRE(aot_module_backward_defaults::backward(call.backward_args()).ok());
    runs.push_back(call.gradients());
  }
  set_num_threads(0);
  CHECK(runs[1] == runs[0]);
  CHECK(runs[2] == runs[0]);
}

TEST_CASE("AOT module backward refuses a d_weights.out_weight of the wrong shape, naming it",
          "[aot][module][backward]") {
  const module_problem p = defaults_problem(1, 4, 4);
  aot_module_call call(p);
  mha_backward_args args = call.backward_args();
  args.d_weights.out_weight.shape[0] = 3;
  const status s = aot_module_backward_defaults::backward(args);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), Catch::Matchers::StartsWith("d_weights.out_weight:"));
}


TEST_CASE("AOT module backward with no input keys is refused, naming key", "[aot][module][backward]") {
  const module_problem p = defaults_problem(2, 3, 0);
  aot_module_call call(p);
  const status s = aot_module_backward_defaults::backward(call.backward_args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), Catch::Matchers::StartsWith("key:"));
}

}  // namespace attngen::testing
