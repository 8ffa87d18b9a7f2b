// Kernels generated with GPU targets, run on the program's GPU API (CUDA or OpenCL; on machines
// without a GPU, OpenCL runs on the CPU through PoCL) against the float64 reference: the subset of
// the configuration matrix that covers GPU tiling edges, every run-time tensor, GQA/MQA and dtypes.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "attngen/runtime/device_tensor.hpp"
#include "gpu/gpu_availability.hpp"
#include "gpu_all_options.hpp"
#include "gpu_bf16_mqa.hpp"
#include "gpu_awkward_dims.hpp"
#include "gpu_gqa_causal.hpp"
#include "gpu_event_attention.hpp"
#include "gpu_modifiers.hpp"
#include "gpu_position_modifiers.hpp"
#include "gpu_tiny_heads_causal.hpp"
#ifdef ATTNGEN_TEST_GPU_F16
#include "gpu_f16_gqa.hpp"
#endif
#include "kernels/aot_call.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

// Test names carry the API: "opencl: ..." or "cuda: ...".
#define GPU_CASE(text) ATTNGEN_TEST_GPU_NAME ": " text

using namespace attngen;
using namespace attngen::testing;

namespace {

constexpr std::uint8_t poison = 0xAB;

enum class placement { host_tensors_copied, device_tensors };

// Runs the kernel on the tested GPU, with the call's tensors where `where` says.
template <typename Kernel>
status run_on_gpu(aot_call& call, placement where) {
  attention_args args = call.args();
  if (where == placement::host_tensors_copied) {
    args.gpu.run_host_tensors_on = tested_device();
    return Kernel::run(args);
  }
  std::vector<std::unique_ptr<device_tensor>> held;
  for (tensor_view* view : {&args.q, &args.k, &args.v, &args.mask, &args.key_padding, &args.captures[0],
                            &args.captures[1], &args.captures[2], &args.captures[3], &args.output, &args.lse}) {
    if (view->empty()) continue;
    held.push_back(std::make_unique<device_tensor>(*view, tested_device()));
    REQUIRE(held.back()->result().ok());
    *view = held.back()->view();
  }
  const status s = Kernel::run(args);
  // The outputs are the last one or two tensors.
  const int outputs = Kernel::description.lse_output ? 2 : 1;
  for (int n = int(held.size()) - outputs; n < int(held.size()); ++n) REQUIRE(held[n]->copy_to_host().ok());
  return s;
}

template <typename Kernel>
void check_on_gpu(int batch, int query_length, int key_length, placement where) {
  const auto problem = make_random_problem(Kernel::description, batch, query_length, key_length, 41);
  aot_call call(problem);
  call.poison_outputs(poison);
  const status s = run_on_gpu<Kernel>(call, where);
  INFO(problem.name() << ": " << s.message());
  REQUIRE(s.ok());
  const auto c = compare_with_reference(problem, reference_attention(problem), call.output(), call.lse());
  INFO(c.first_failure);
  CHECK(c.ok);
}

}  // namespace

TEST_CASE(GPU_CASE("GQA 32/8 D128 causal with host tensors copied in and out matches the reference"), "[gpu]") {
  check_on_gpu<gpu_gqa_causal>(1, 33, 33, placement::host_tensors_copied);
  check_on_gpu<gpu_gqa_causal>(2, 17, 40, placement::host_tensors_copied);
  check_on_gpu<gpu_gqa_causal>(1, 1, 70, placement::host_tensors_copied);
}

TEST_CASE(GPU_CASE("GQA 32/8 D128 causal on device tensors matches the reference"), "[gpu]") {
  check_on_gpu<gpu_gqa_causal>(1, 45, 45, placement::device_tensors);
}

TEST_CASE(GPU_CASE("every run-time tensor (bottom-right causal, mask, padding, lse) on device tensors matches the reference"),
          "[gpu]") {
  check_on_gpu<gpu_all_options>(3, 17, 45, placement::device_tensors);
  check_on_gpu<gpu_all_options>(1, 45, 17, placement::device_tensors);
  check_on_gpu<gpu_all_options>(2, 1, 1, placement::device_tensors);
}

TEST_CASE(GPU_CASE("every run-time tensor with host tensors copied in and out matches the reference"), "[gpu]") {
  check_on_gpu<gpu_all_options>(2, 33, 70, placement::host_tensors_copied);
}

TEST_CASE(GPU_CASE("bf16 MQA with LSE matches the reference"), "[gpu]") {
  check_on_gpu<gpu_bf16_mqa>(1, 40, 64, placement::device_tensors);
  check_on_gpu<gpu_bf16_mqa>(3, 7, 17, placement::host_tensors_copied);
}

TEST_CASE(GPU_CASE("head dims 24/40, per-head mask and keep-polarity padding matches the reference"), "[gpu]") {
  check_on_gpu<gpu_awkward_dims>(2, 9, 23, placement::device_tensors);
  check_on_gpu<gpu_awkward_dims>(1, 31, 5, placement::host_tensors_copied);
}

#ifdef ATTNGEN_TEST_GPU_F16
TEST_CASE(GPU_CASE("f16 GQA matches the reference"), "[gpu]") {
  check_on_gpu<gpu_f16_gqa>(2, 37, 70, placement::device_tensors);
}
#endif

TEST_CASE(GPU_CASE("head dims 5/3 MQA causal matches the reference"), "[gpu]") {
  check_on_gpu<gpu_tiny_heads_causal>(2, 19, 19, placement::device_tensors);
  check_on_gpu<gpu_tiny_heads_causal>(1, 5, 12, placement::host_tensors_copied);
}

TEST_CASE(GPU_CASE("modifiers (document mask, causal mask, ALiBi, run-time softcap) match the reference"), "[gpu]") {
  check_on_gpu<gpu_modifiers>(2, 70, 70, placement::device_tensors);
  check_on_gpu<gpu_modifiers>(1, 33, 33, placement::host_tensors_copied);
}

TEST_CASE(GPU_CASE("modifiers (prefix-LM, causal bottom-right, sliding window, bias table, softcap) match the reference"),
          "[gpu]") {
  check_on_gpu<gpu_position_modifiers>(2, 150, 300, placement::device_tensors);
  check_on_gpu<gpu_position_modifiers>(1, 61, 47, placement::host_tensors_copied);
}

TEST_CASE(GPU_CASE("example 03's custom modifier (timestamped events) matches the reference"), "[gpu]") {
  check_on_gpu<gpu_event_attention>(2, 90, 90, placement::device_tensors);
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
