// Module kernels through the real path: attngen_add_kernel, the generated library, the runtime; the
// kernel aot_<name> of each module configuration of the registry with AOT calls
// (support/configurations.hpp) against PyTorch at those calls.

#include <catch2/catch.hpp>
#include <cstring>

#include "aot_module_all_options.hpp"
#include "aot_module_encoder.hpp"
#include "attngen/runtime/detail/module_part_times.hpp"
#include "attngen/runtime/detail/variants.hpp"
#include "compiled_kernels.hpp"
#include "kernels/aot_module_call.hpp"
#include "module/module_compare.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configuration_tests.hpp"
#include "support/required_kernel.hpp"

namespace attngen::testing {
namespace {

void check_against_pytorch(status (*run)(const mha_args&), const std::vector<module_problem>& problems) {
  const auto references = pytorch_references(problems);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    INFO(problems[n].name());
    aot_module_call call(problems[n]);
    const status s = run(call.args());
    INFO(s.message());
    REQUIRE(s.ok());
    std::string where;
    const double output_error = scaled_error(call.output(), references[n].output, where);
    INFO("output " << where);
    CHECK(output_error <= module_tolerance_for(problems[n]));
    if (!references[n].weights.empty()) {
      const double weights_error = scaled_error(call.weights(), references[n].weights, where);
      INFO("weights " << where);
      CHECK(weights_error <= module_tolerance_for(problems[n]));
    }
  }
}

const bool registered = [] {
  for (const module_configuration& c : module_configurations)
    if (!c.aot.empty())
      register_test_case(title(c) + ": the AOT module matches PyTorch in an inference call at " + sizes_text(c.aot),
                         "[aot][module]", [&c] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "aot_");
                           std::vector<module_problem> problems;
                           std::uint32_t seed = 1;
                           for (const shape& s : c.aot)
                             problems.push_back(
                                 make_random_module_problem(c.desc, s.batch, s.query_length, s.key_length, seed++));
                           check_against_pytorch(kernel.run_module, problems);
                         });
  return true;
}();

}  // namespace

TEST_CASE("AOT self-attention module is generated without single_query, so its shortest calls run short_keys",
          "[aot][module]") {
  constexpr auto desc = description_of<"module_self_attention">();
  STATIC_REQUIRE(!module_has_variant(kernel_variant::single_query, desc.self_attn));
}

TEST_CASE("AOT module with no input keys attends to its appended bias_k and zero keys only", "[aot][module]") {
  check_against_pytorch(&aot_module_all_options::run,
                        {make_random_module_problem(aot_module_all_options::description, 2, 5, 0, 20)});
}

TEST_CASE("AOT module runs on weights viewed in a PyTorch state_dict with packed in_proj tensors", "[aot][module]") {
  const module_problem p = make_random_module_problem(aot_module_encoder::description, 2, 7, 9, 8);
  aot_module_call direct(p), loaded(p);
  REQUIRE(aot_module_encoder::run(direct.args()).ok());
  packed_state_dict state(loaded);
  mha_args args = loaded.args();
  const status s = weights_from_state_dict(aot_module_encoder::description, state.tensors, args.weights);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(aot_module_encoder::run(args).ok());
  CHECK(loaded.output() == direct.output());
  CHECK(loaded.weights() == direct.weights());
}

TEST_CASE("AOT module runs on a state_dict with separate q/k/v projection weights and bias_k, bias_v",
          "[aot][module]") {
  const module_problem p = make_random_module_problem(aot_module_all_options::description, 2, 7, 9, 12);
  aot_module_call direct(p), loaded(p);
  REQUIRE(aot_module_all_options::run(direct.args()).ok());
  std::vector<std::uint8_t> in_proj_bias;
  for (const char* name : {"q_bias", "k_bias", "v_bias"}) {
    const auto& bytes = loaded.input_bytes(name);
    in_proj_bias.insert(in_proj_bias.end(), bytes.begin(), bytes.end());
  }
  const state_dict_tensor state[] = {{"q_proj_weight", loaded.input_bytes("q_weight").data()},
                                     {"k_proj_weight", loaded.input_bytes("k_weight").data()},
                                     {"v_proj_weight", loaded.input_bytes("v_weight").data()},
                                     {"in_proj_bias", in_proj_bias.data()},
                                     {"bias_k", loaded.input_bytes("bias_k").data()},
                                     {"bias_v", loaded.input_bytes("bias_v").data()},
                                     {"out_proj.weight", loaded.input_bytes("out_weight").data()},
                                     {"out_proj.bias", loaded.input_bytes("out_bias").data()}};
  mha_args args = loaded.args();
  const status s = weights_from_state_dict(aot_module_all_options::description, state, args.weights);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(aot_module_all_options::run(args).ok());
  CHECK(loaded.output() == direct.output());
  CHECK(loaded.weights() == direct.weights());
}

TEST_CASE("AOT module call adds its parts' times to the record its thread installs, and none after",
          "[aot][module]") {
  const module_problem p = make_random_module_problem(aot_module_all_options::description, 2, 17, 19, 5);
  aot_module_call call(p);
  attngen::detail::module_part_times times;
  attngen::detail::record_module_part_times(&times);
  REQUIRE(aot_module_all_options::run(call.args()).ok());
  attngen::detail::record_module_part_times(nullptr);
  CHECK(times.projections > 0);
  CHECK(times.attention > 0);
  CHECK(times.weights > 0);  // per-head weights
  const attngen::detail::module_part_times recorded = times;
  REQUIRE(aot_module_all_options::run(call.args()).ok());
  CHECK(times.projections == recorded.projections);
  CHECK(times.attention == recorded.attention);
}

TEST_CASE("AOT module's dropout gives bitwise the same result on 1 thread and on every thread", "[aot][module]") {
  module_problem p = make_random_module_problem(aot_module_all_options::description, 3, 33, 41, 13);
  p.training = true;
  aot_module_call one_thread(p), all_threads(p);
  set_num_threads(1);
  REQUIRE(aot_module_all_options::run(one_thread.args()).ok());
  set_num_threads(0);
  REQUIRE(aot_module_all_options::run(all_threads.args()).ok());
  CHECK(one_thread.output() == all_threads.output());
  CHECK(one_thread.weights() == all_threads.weights());
}

TEST_CASE("AOT module's dropout in training calls is reproducible from the seed and changes the result",
          "[aot][module]") {
  module_problem p = make_random_module_problem(aot_module_all_options::description, 2, 17, 19, 9);
  aot_module_call inference(p);
  REQUIRE(aot_module_all_options::run(inference.args()).ok());
  p.training = true;
  aot_module_call first(p), again(p);
  REQUIRE(aot_module_all_options::run(first.args()).ok());
  REQUIRE(aot_module_all_options::run(again.args()).ok());
  CHECK(first.output() == again.output());
  CHECK(first.weights() == again.weights());
  CHECK(first.weights() != inference.weights());
}

TEST_CASE("AOT module with no keys and none appended outputs the output projection's bias", "[aot][module]") {
  const module_problem p = make_random_module_problem(aot_module_encoder::description, 2, 3, 0, 10);
  aot_module_call call(p);
  call.poison_outputs(0xff);
  const status s = aot_module_encoder::run(call.args());
  INFO(s.message());
  REQUIRE(s.ok());
  const std::vector<float> output = call.output();
  const auto& bias = p.inputs.at("out_bias").values;
  const int E = aot_module_encoder::description.embed;
  for (std::size_t n = 0; n < output.size(); ++n) CHECK(output[n] == bias[n % E]);
}

TEST_CASE("AOT module with batch 0 or length 0 writes nothing", "[aot][module]") {
  for (auto [batch, length] : {std::pair{0, 5}, std::pair{2, 0}}) {
    const module_problem p = make_random_module_problem(aot_module_encoder::description, batch, length, 4, 11);
    aot_module_call call(p);
    const status s = aot_module_encoder::run(call.args());
    INFO(s.message());
    CHECK(s.ok());
  }
}

TEST_CASE("generated module header records the description, targets and version", "[aot][module]") {
  STATIC_REQUIRE(aot_module_all_options::description == description_of<"module_all_options">());
  CHECK(std::strstr(aot_module_all_options::description_text, "kind = module") != nullptr);
  CHECK(std::strstr(aot_module_all_options::description_text, "add_bias_kv = true") != nullptr);
  CHECK(std::string(aot_module_all_options::targets).find("avx512_skylake") != std::string::npos);
  CHECK(std::string(aot_module_all_options::attngen_version) == ATTNGEN_TEST_VERSION);
}

}  // namespace attngen::testing
