// The backward pass of kernels generated with GPU targets, run on the program's GPU API (OpenCL runs
// on the CPU through PoCL where there is no GPU): for each configuration of the registry with a
// backward and GPU calls, the forward's output and log-sum-exp (the kernel's CPU code), then the
// GPU backward's gradients against the float64 reference's.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "compiled_kernels.hpp"
#include "gpu/device_copies.hpp"
#include "gpu/gpu_availability.hpp"
#include "kernels/aot_backward_call.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_backward.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"
#include "support/required_kernel.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

// Runs the backward on the tested GPU, with the call's tensors where `where` says.
status run_backward_on_gpu(const compiled_kernel& kernel, attention_backward_args args, placement where) {
  if (where == placement::host_tensors_copied) {
    args.gpu.run_host_tensors_on = tested_device();
    return kernel.run_backward(args);
  }
  std::vector<tensor_view*> inputs{&args.q, &args.k, &args.v, &args.sinks, &args.mask, &args.key_padding,
                                   &args.output, &args.lse, &args.d_output};
  std::vector<tensor_view*> gradients{&args.dq, &args.dk, &args.dv, &args.d_sinks, &args.d_scalars};
  for (tensor_view& capture : args.captures) inputs.push_back(&capture);
  for (tensor_view& gradient : args.d_captures) gradients.push_back(&gradient);
  device_copies on_device(inputs, gradients);
  const status s = kernel.run_backward(args);
  on_device.copy_outputs_back();
  return s;
}

void check_backward_on_gpu(const compiled_kernel& kernel, const attention_desc& desc, const shape& sizes,
                           placement where) {
  const attention_problem p = make_random_problem(desc, sizes.batch, sizes.query_length, sizes.key_length, 57);
  aot_call forward(p);
  REQUIRE(kernel.run_operator(forward.args()).ok());
  const std::vector<float> d_output = make_random_output_gradient(p, 58);
  aot_backward_call backward(p, forward, d_output);
  const status s = run_backward_on_gpu(kernel, backward.args(), where);
  INFO(p.name() << ": " << s.message());
  REQUIRE(s.ok());
  const reference_gradients expected = reference_attention_backward(p, d_output);
  for (const std::string& failure : gradient_failures(p, expected, backward.gradients())) CHECK(failure == "");
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations) {
    if (!c.desc.backward || !cannot_run(tested_backend(), c.desc).empty()) continue;
    for (const placement where : {placement::host_tensors_copied, placement::device_tensors}) {
      const std::vector<shape> calls = calls_with(c.gpu, where);
      if (calls.empty()) continue;
      register_test_case(std::string(ATTNGEN_TEST_GPU_NAME ": ") + title(c) + " " + placement_text(where) +
                             ": the backward matches the float64 gradients at " + sizes_text(calls),
                         "[gpu][backward]" + std::string(c.tags), [&c, where, calls] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "gpu_");
                           REQUIRE(kernel.run_backward != nullptr);
                           for (const shape& s : calls) check_backward_on_gpu(kernel, c.desc, s, where);
                         });
    }
  }
  return true;
}();

}  // namespace
