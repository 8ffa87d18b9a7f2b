// Module backward passes generated with GPU targets, run on the program's GPU API against PyTorch's
// autograd in float64: the kernel gpu_<name> of each module configuration of the registry with a
// backward and GPU calls, at those calls, with host tensors copied and with device tensors.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compiled_kernels.hpp"
#include "gpu/device_copies.hpp"
#include "gpu/gpu_availability.hpp"
#include "kernels/aot_module_call.hpp"
#include "module/module_backward_check.hpp"
#include "module/pytorch_reference.hpp"
#include "support/configuration_tests.hpp"
#include "support/required_kernel.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

// Runs the backward on the tested GPU with the call's tensors where `where` says; the gradients end
// up in `call`.
status run_backward_on_gpu(const compiled_kernel& kernel, aot_module_call& call, placement where) {
  mha_backward_args args = call.backward_args();
  if (where == placement::host_tensors_copied) {
    args.gpu.run_host_tensors_on = tested_device();
    return kernel.run_module_backward(args);
  }
  mha_weights &w = args.weights, &dw = args.d_weights;
  const std::vector<tensor_view*> inputs{&args.query, &args.key, &args.value, &w.q_weight, &w.k_weight, &w.v_weight,
                                         &w.q_bias, &w.k_bias, &w.v_bias, &w.bias_k, &w.bias_v, &w.out_weight,
                                         &w.out_bias, &args.key_padding_mask, &args.attn_mask, &args.d_output};
  const std::vector<tensor_view*> gradients{&args.d_query, &args.d_key, &args.d_value, &dw.q_weight, &dw.k_weight,
                                            &dw.v_weight, &dw.q_bias, &dw.k_bias, &dw.v_bias, &dw.bias_k,
                                            &dw.bias_v, &dw.out_weight, &dw.out_bias};
  device_copies on_device(inputs, gradients);
  const status s = kernel.run_module_backward(args);
  on_device.copy_outputs_back();
  return s;
}

// Each problem's gradients from the GPU against PyTorch's autograd.
void check_gradients_on_gpu(const compiled_kernel& kernel, const std::vector<module_problem>& problems,
                            placement where) {
  const std::vector<module_gradients> expected = pytorch_gradients(problems);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    aot_module_call call(problems[n]);
    const status s = run_backward_on_gpu(kernel, call, where);
    INFO(problems[n].name() << ": " << s.message());
    REQUIRE(s.ok());
    check_module_gradients(problems[n], call.gradients(), expected[n]);
  }
}

// Two calls on the same tensors give the same bits: the backward's sums run in a fixed order.
void check_backward_repeats_on_gpu(const compiled_kernel& kernel, const module_configuration& c,
                                   const std::vector<shape>& calls, placement where) {
  for (const module_problem& problem : make_module_backward_problems(c.desc, calls, 37)) {
    aot_module_call first(problem), second(problem);
    REQUIRE(run_backward_on_gpu(kernel, first, where).ok());
    REQUIRE(run_backward_on_gpu(kernel, second, where).ok());
    INFO(problem.name());
    const std::map<std::string, std::vector<float>> first_gradients = first.gradients();
    const std::map<std::string, std::vector<float>> second_gradients = second.gradients();
    for (const auto& [name, values] : first_gradients) {
      INFO(name);
      const std::vector<float>& again = second_gradients.at(name);
      REQUIRE(values.size() == again.size());
      std::size_t differing = 0;
      for (std::size_t n = 0; n < values.size(); ++n)
        differing += std::memcmp(&values[n], &again[n], sizeof(float)) != 0;
      CHECK(differing == 0);
    }
  }
}

// Outside training a description with dropout drops nothing: PyTorch's gradients in eval mode.
std::vector<module_problem> problems_outside_training(const module_configuration& c, const std::vector<shape>& calls) {
  std::vector<module_problem> problems = make_module_backward_problems(c.desc, calls, 41);
  for (module_problem& p : problems) p.training = false;
  return problems;
}

// The configuration's kernel, with its backward pass.
const compiled_kernel& module_kernel(const module_configuration& c) {
  const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "gpu_");
  REQUIRE(kernel.run_module_backward != nullptr);
  return kernel;
}

const bool registered = [] {
  for (const module_configuration& c : module_configurations) {
    if (!c.desc.backward || !cannot_run(tested_backend(), c.desc).empty()) continue;
    for (const placement where : {placement::host_tensors_copied, placement::device_tensors}) {
      const std::vector<shape> calls = calls_with(c.gpu, where);
      if (calls.empty()) continue;
      const std::string prefix = std::string(ATTNGEN_TEST_GPU_NAME ": ") + title(c) + " " + placement_text(where);
      register_test_case(prefix + ": the module's backward matches PyTorch's autograd at " + sizes_text(calls),
                         "[gpu][module][backward]",
                         [&c, where, calls] {
                           check_gradients_on_gpu(module_kernel(c), make_module_backward_problems(c.desc, calls, 31),
                                                  where);
                         });
      register_test_case(prefix + ": the module's backward gives the same bits on two calls at " + sizes_text(calls),
                         "[gpu][module][backward]",
                         [&c, where, calls] { check_backward_repeats_on_gpu(module_kernel(c), c, calls, where); });
      if (c.desc.has_dropout())
        register_test_case(
            prefix + ": outside training the module's backward matches PyTorch's autograd in eval mode at " +
                sizes_text(calls),
            "[gpu][module][backward]",
            [&c, where, calls] {
              check_gradients_on_gpu(module_kernel(c), problems_outside_training(c, calls), where);
            });
    }
  }
  return true;
}();

}  // namespace
