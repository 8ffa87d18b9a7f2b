// Kernels generated with GPU targets, run on the program's GPU API (CUDA or OpenCL; on machines
// without a GPU, OpenCL runs on the CPU through PoCL) against the float64 reference: the kernel
// gpu_<name> of each configuration of the registry with GPU calls (support/configurations.hpp), at
// those calls, which cover GPU tiling edges, every run-time tensor, GQA/MQA, dtypes and modifiers.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "attngen/runtime/device_tensor.hpp"
#include "compiled_kernels.hpp"
#include "gpu/gpu_availability.hpp"
#include "gpu_all_options.hpp"
#include "gpu_tiny_heads_causal.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"
#include "support/required_kernel.hpp"

// Test names carry the API: "opencl: ..." or "cuda: ...".
#define GPU_CASE(text) ATTNGEN_TEST_GPU_NAME ": " text

using namespace attngen;
using namespace attngen::testing;

namespace {

constexpr std::uint8_t poison = 0xAB;

// Runs the kernel on the tested GPU with `args`' tensors where `where` says: host tensors copied in
// and out by the runtime, or copies on the device (the index tensors stay host memory, as every
// call's do) whose outputs are copied back.
status run_on_gpu(const compiled_kernel& kernel, attention_args args, bool lse_output, placement where) {
  if (where == placement::host_tensors_copied) {
    args.gpu.run_host_tensors_on = tested_device();
    return kernel.run_operator(args);
  }
  std::vector<std::unique_ptr<device_tensor>> held;
  for (tensor_view* view : {&args.q, &args.k, &args.v, &args.k_scale, &args.v_scale, &args.sinks, &args.mask,
                            &args.key_padding, &args.captures[0], &args.captures[1], &args.captures[2],
                            &args.captures[3], &args.output, &args.lse}) {
    if (view->empty()) continue;
    held.push_back(std::make_unique<device_tensor>(*view, tested_device()));
    REQUIRE(held.back()->result().ok());
    *view = held.back()->view();
  }
  const status s = kernel.run_operator(args);
  // The outputs are the last one or two tensors.
  const int outputs = lse_output ? 2 : 1;
  for (int n = int(held.size()) - outputs; n < int(held.size()); ++n) REQUIRE(held[n]->copy_to_host().ok());
  return s;
}

void check_on_gpu(const compiled_kernel& kernel, const attention_desc& desc, const shape& sizes, placement where) {
  const auto problem = make_random_problem(desc, sizes.batch, sizes.query_length, sizes.key_length, 41);
  aot_call call(problem);
  call.poison_outputs(poison);
  const status s = run_on_gpu(kernel, call.args(), desc.lse_output, where);
  INFO(problem.name() << ": " << s.message());
  REQUIRE(s.ok());
  const auto c = compare_with_reference(problem, reference_attention(problem), call.output(), call.lse());
  INFO(c.first_failure);
  CHECK(c.ok);
}

// A batch of sequences of their own lengths, its tensors where `where` says: host tensors are copied
// in and out per sequence's call; device tensors go to the tensor-core kernel in one launch where it
// takes the description, else to each sequence's call on views of them.
void check_sequences_on_gpu(const compiled_kernel& kernel, const attention_desc& desc, const sequence_lengths& lengths,
                            placement where) {
  const std::vector<int> queries(lengths.queries.begin(), lengths.queries.end());
  const std::vector<int> keys(lengths.keys.begin(), lengths.keys.end());
  sequence_batch batch = make_sequence_batch(desc, queries, keys, 43);
  const status s = run_on_gpu(kernel, batch.args(), desc.lse_output, where);
  INFO(lengths_text(queries, keys) << " " << placement_text(where) << ": " << s.message());
  REQUIRE(s.ok());
  const comparison c = compare_sequences_with_reference(batch);
  INFO(c.first_failure);
  CHECK(c.ok);
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations) {
    if (!cannot_run(tested_backend(), c.desc).empty()) continue;
    // An OpenCL buffer cannot be cut into sequences' views: OpenCL batches take host tensors.
    for (const placement where : {placement::host_tensors_copied, placement::device_tensors}) {
      if (c.gpu_batches.empty() || (where == placement::device_tensors && tested_backend() != backend::cuda)) continue;
      register_test_case(std::string(ATTNGEN_TEST_GPU_NAME ": ") + title(c) + " " + placement_text(where) +
                             " matches the float64 reference per sequence",
                         "[gpu]" + std::string(c.tags), [&c, where] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "gpu_");
                           for (const sequence_lengths& lengths : c.gpu_batches)
                             check_sequences_on_gpu(kernel, c.desc, lengths, where);
                         });
    }
    for (const placement where : {placement::host_tensors_copied, placement::device_tensors}) {
      const std::vector<shape> calls = calls_with(c.gpu, where);
      if (calls.empty()) continue;
      register_test_case(std::string(ATTNGEN_TEST_GPU_NAME ": ") + title(c) + " " + placement_text(where) +
                             " matches the float64 reference at " + sizes_text(calls),
                         "[gpu]" + std::string(c.tags), [&c, where, calls] {
                           const compiled_kernel& kernel = required_kernel(compiled_kernels, c.name, "gpu_");
                           for (const shape& s : calls) check_on_gpu(kernel, c.desc, s, where);
                         });
    }
  }
  return true;
}();

}  // namespace

TEST_CASE(GPU_CASE("every GPU kernel of the program is generated from the description of a configuration with GPU "
                   "calls this API can run"),
          "[gpu]") {
  for (const compiled_kernel& kernel : compiled_kernels) {
    INFO("gpu_" << kernel.configuration);
    CHECK(has_calls(kernel.configuration, tested_backend()));
    CHECK(kernel.description_text == description_text_of(kernel.configuration));
  }
}

TEST_CASE(GPU_CASE("no keys on device tensors gives output 0 and lse -inf"), "[gpu][limits]") {
  const auto problem = make_random_problem(gpu_all_options::description, 2, 5, 1, 41);
  aot_call call(problem);
  call.poison_outputs(poison);
  attention_args args = call.args();
  args.k.shape[1] = args.v.shape[1] = args.key_padding.shape[1] = args.mask.shape[3] = 0;
  device_tensor q(args.q, tested_device()), output(args.output, tested_device()), lse(args.lse, tested_device());
  args.q = q.view();
  args.k = on_device(args.k, tested_device());
  args.v = on_device(args.v, tested_device());
  args.mask = on_device(args.mask, tested_device());
  args.key_padding = on_device(args.key_padding, tested_device());
  args.output = output.view();
  args.lse = lse.view();
  const status s = gpu_all_options::run(args);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(output.copy_to_host().ok());
  REQUIRE(lse.copy_to_host().ok());
  for (float x : call.output()) CHECK(x == 0.0f);
  for (float x : call.lse()) CHECK((std::isinf(x) && x < 0));
}

TEST_CASE(GPU_CASE("tensors on two devices are rejected naming the argument, and nothing is written"), "[gpu][errors]") {
  const auto problem = make_random_problem(gpu_tiny_heads_causal::description, 1, 4, 4, 41);
  aot_call call(problem);
  call.poison_outputs(poison);
  attention_args args = call.args();
  device_tensor k(args.k, tested_device());
  args.k = k.view();
  const status s = gpu_tiny_heads_causal::run(args);
  CHECK(s.code() == error_code::wrong_device);
  CHECK(s.message() == std::string("k: is on ") + ATTNGEN_TEST_GPU_NAME +
                           " but q is on host; one call's tensors must all be on one device");
  CHECK(call.outputs_all_equal(poison));
}
