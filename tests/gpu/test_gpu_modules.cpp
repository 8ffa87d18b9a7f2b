// Module kernels generated with GPU targets, run on the program's GPU API against PyTorch's
// nn.MultiheadAttention in float64 (the kernel gpu_<name> of each module configuration of the registry
// with GPU calls, support/configurations.hpp, at those calls), and against the same kernel's CPU code
// where dropout draws its mask.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "attngen/runtime/device_tensor.hpp"
#include "compiled_kernels.hpp"
#include "gpu/gpu_availability.hpp"
#include "gpu_module_all_options.hpp"
#include "gpu_module_bf16_gqa.hpp"
#include "kernels/aot_module_call.hpp"
#include "module/module_compare.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configuration_tests.hpp"
#include "support/required_kernel.hpp"

#define GPU_CASE(text) ATTNGEN_TEST_GPU_NAME ": " text

using namespace attngen;
using namespace attngen::testing;

namespace {

// Every tensor of a module call, outputs last.
std::vector<tensor_view*> module_tensors(mha_args& args) {
  mha_weights& w = args.weights;
  return {&args.query,  &args.key,         &args.value,      &w.q_weight,        &w.k_weight,     &w.v_weight,
          &w.q_bias,    &w.k_bias,         &w.v_bias,        &w.bias_k,          &w.bias_v,       &w.out_weight,
          &w.out_bias,  &args.key_padding_mask, &args.attn_mask, &args.output,   &args.attn_weights};
}

// Runs the module on the tested GPU with its tensors where `where` says, in training where the
// problem is (PyTorch's forward reference has no dropout: those calls are inference); outputs end up
// in `call`.
status run_module_on_gpu(status (*run)(const mha_args&), aot_module_call& call, placement where) {
  mha_args args = call.args();
  if (where == placement::host_tensors_copied) {
    args.gpu.run_host_tensors_on = tested_device();
    return run(args);
  }
  std::vector<std::unique_ptr<device_tensor>> outputs;
  std::vector<std::unique_ptr<device_tensor>> inputs;
  for (tensor_view* view : module_tensors(args)) {
    if (view->empty()) continue;
    const bool is_output = view == &args.output || view == &args.attn_weights;
    auto& held = is_output ? outputs : inputs;
    held.push_back(std::make_unique<device_tensor>(*view, tested_device()));
    REQUIRE(held.back()->result().ok());
    *view = held.back()->view();
  }
  const status s = run(args);
  for (auto& output : outputs) REQUIRE(output->copy_to_host().ok());
  return s;
}

void check_module_on_gpu(status (*run)(const mha_args&), const std::vector<module_problem>& problems,
                         placement where) {
  const auto references = pytorch_references(problems);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    INFO(problems[n].name());
    aot_module_call call(problems[n]);
    const status s = run_module_on_gpu(run, call, where);
    INFO(s.message());
    REQUIRE(s.ok());
    std::string where_worst;
    const double output_error = scaled_error(call.output(), references[n].output, where_worst);
    INFO("output " << where_worst);
    CHECK(output_error <= module_tolerance_for(problems[n]));
    if (!references[n].weights.empty()) {
      const double weights_error = scaled_error(call.weights(), references[n].weights, where_worst);
      INFO("weights " << where_worst);
      CHECK(weights_error <= module_tolerance_for(problems[n]));
    }
  }
}

// In training, dropout drops on the GPU the weights the same kernel's CPU code drops (same seed).
void check_dropout_on_gpu_against_cpu(status (*run)(const mha_args&), const module_configuration& c,
                                      const std::vector<shape>& calls, placement where) {
  std::uint32_t seed = 13;
  for (const shape& s : calls) {
    module_problem p = make_random_module_problem(c.desc, s.batch, s.query_length, s.key_length, seed++);
    p.training = true;
    INFO(p.name());
    aot_module_call on_cpu(p), on_gpu(p);
    REQUIRE(run(on_cpu.args()).ok());
    REQUIRE(run_module_on_gpu(run, on_gpu, where).ok());
    auto widened = [](const std::vector<float>& values) { return std::vector<double>(values.begin(), values.end()); };
    std::string worst;
    const double output_error = scaled_error(on_gpu.output(), widened(on_cpu.output()), worst);
    INFO("output " << worst);
    CHECK(output_error <= module_tolerance_for(p));
    if (c.desc.weights != weights_output::none) {
      const double weights_error = scaled_error(on_gpu.weights(), widened(on_cpu.weights()), worst);
      INFO("weights " << worst);
      CHECK(weights_error <= module_tolerance_for(p));
    }
  }
}

const bool registered = [] {
  for (const module_configuration& c : module_configurations) {
    if (!cannot_run(tested_backend(), c.desc).empty()) continue;
    for (const placement where : {placement::host_tensors_copied, placement::device_tensors}) {
      const std::vector<shape> calls = calls_with(c.gpu, where);
      if (calls.empty()) continue;
      register_test_case(std::string(ATTNGEN_TEST_GPU_NAME ": ") + title(c) + " " + placement_text(where) +
                             " matches PyTorch at " + sizes_text(calls),
                         "[gpu][module]", [&c, where, calls] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "gpu_");
                           std::vector<module_problem> problems;
                           std::uint32_t seed = 1;
                           for (const shape& s : calls)
                             problems.push_back(
                                 make_random_module_problem(c.desc, s.batch, s.query_length, s.key_length, seed++));
                           check_module_on_gpu(kernel.run_module, problems, where);
                         });
      if (c.desc.has_dropout())
        register_test_case(std::string(ATTNGEN_TEST_GPU_NAME ": ") + title(c) + " " + placement_text(where) +
                               ": in training dropout drops the weights the CPU code drops at " + sizes_text(calls),
                           "[gpu][module]", [&c, where, calls] {
                             const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "gpu_");
                             check_dropout_on_gpu_against_cpu(kernel.run_module, c, calls, where);
                           });
    }
  }
  return true;
}();

}  // namespace

TEST_CASE(GPU_CASE("module with no input keys but appended ones is refused on the GPU, nothing written"),
          "[gpu][module]") {
  const module_problem p = make_random_module_problem(gpu_module_all_options::description, 2, 5, 0, 20);
  aot_module_call call(p);
  const std::vector<float> untouched = call.output();
  const status s = run_module_on_gpu(&gpu_module_all_options::run, call, placement::host_tensors_copied);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), Catch::Matchers::StartsWith("key: no input keys"));
  CHECK(call.output() == untouched);
}

TEST_CASE(GPU_CASE("module with no keys on device tensors writes the output projection's bias to every row"),
          "[gpu][module][limits]") {
  const module_problem p = make_random_module_problem(gpu_module_bf16_gqa::description, 2, 3, 1, 14);
  aot_module_call call(p);
  mha_args args = call.args();
  args.key.shape[1] = args.value.shape[1] = args.attn_mask.shape[1] = args.attn_weights.shape[3] = 0;
  // Tensors with elements are copied to the device; those without are only marked as there.
  std::vector<std::unique_ptr<device_tensor>> held;
  for (tensor_view* view : module_tensors(args)) {
    if (view->empty()) continue;
    if (std::find(view->shape, view->shape + view->rank, 0) != view->shape + view->rank) {
      *view = on_device(*view, tested_device());
      continue;
    }
    held.push_back(std::make_unique<device_tensor>(*view, tested_device()));
    REQUIRE(held.back()->result().ok());
    *view = held.back()->view();
  }
  const status s = gpu_module_bf16_gqa::run(args);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(held.back()->copy_to_host().ok());  // the output: the last tensor with elements
  const std::vector<float>& bias = p.inputs.at("out_bias").values;
  const std::vector<float> result = call.output();
  REQUIRE(result.size() == 2 * 3 * bias.size());
  for (std::size_t n = 0; n < result.size(); ++n) CHECK(result[n] == bias[n % bias.size()]);
}
