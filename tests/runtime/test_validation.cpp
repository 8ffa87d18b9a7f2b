// Bad input to a generated kernel returns an error naming the argument, expected and actual values,
// and writes nothing. Uses the AOT kernel that takes every tensor: H4 KVH2 D64 Dv32, bottom-right
// causal, (B, 1, Lq, Lk) mask, key padding, LSE.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "aot_all_options.hpp"
#include "aot_all_options_halide_general.h"
#include "attngen/runtime/detail/kernel_bridge.hpp"
#include "attngen/runtime/device_tensor.hpp"
#include "kernels/aot_call.hpp"

using namespace attngen;
using namespace attngen::testing;
using Catch::Matchers::Equals;

namespace {

constexpr std::uint8_t poison = 0xAB;

// Calls the kernel with arguments changed by `break_it`, and checks the error and that nothing was written.
void expect_error(const std::function<void(attention_args&)>& break_it, error_code code, const std::string& message) {
  const auto problem = make_random_problem(aot_all_options::description, 3, 17, 113, 5);
  aot_call call(problem);
  call.poison_outputs(poison);
  attention_args args = call.args();
  break_it(args);
  const status s = aot_all_options::run(args);
  CHECK_THAT(s.message(), Equals(message));
  CHECK(s.code() == code);
  CHECK(call.outputs_all_equal(poison));
}

}  // namespace

TEST_CASE("valid arguments pass validation and the call succeeds", "[runtime][validation]") {
  const auto problem = make_random_problem(aot_all_options::description, 3, 17, 113, 5);
  aot_call call(problem);
  call.poison_outputs(poison);
  const status s = aot_all_options::run(call.args());
  CHECK(s.ok());
  CHECK(s.message().empty());
  CHECK(!call.outputs_all_equal(poison));
}

TEST_CASE("the typed call takes the description's tensors by name and gives run(args)'s result", "[runtime][typed]") {
  const auto problem = make_random_problem(aot_all_options::description, 2, 17, 40, 6);
  aot_call generic(problem), typed(problem);
  REQUIRE(aot_all_options::run(generic.args()).ok());
  const attention_args a = typed.args();
  REQUIRE(aot_all_options::run(a.q, a.k, a.v, a.mask, a.key_padding, a.output, a.lse).ok());
  CHECK(typed.output() == generic.output());
  CHECK(typed.lse() == generic.lse());
}

TEST_CASE("an output made from a const pointer is refused as read-only", "[runtime][validation]") {
  expect_error(
      [](attention_args& a) {
        a.output = make_tensor(static_cast<const void*>(a.output.data), a.output.type,
                               {a.output.shape[0], a.output.shape[1], a.output.shape[2], a.output.shape[3]});
      },
      error_code::read_only_output, "output: is a view of const memory (made from a const pointer), but the kernel writes it");
}

TEST_CASE("null q pointer is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.q.data = nullptr; }, error_code::null_pointer, "q: data pointer is null");
}

TEST_CASE("missing required mask is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.mask = {}; }, error_code::null_pointer, "mask: data pointer is null");
}

TEST_CASE("q of rank 3 is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.q.rank = 3; }, error_code::wrong_rank,
               "q: expected rank 4 (B, Lq, H, D), got rank 3");
}

TEST_CASE("q with the wrong number of heads is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.q.shape[2] = 8; }, error_code::wrong_shape,
               "q: expected 4 heads, got 8; shape is (3, 17, 8, 64)");
}

TEST_CASE("k with the wrong number of kv heads is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.k.shape[2] = 1; }, error_code::wrong_shape,
               "k: expected 2 kv heads, got 1; shape is (3, 113, 1, 64)");
}

TEST_CASE("k with the wrong head_dim is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.k.shape[3] = 32; }, error_code::wrong_shape,
               "k: expected head_dim 64, got 32; shape is (3, 113, 2, 32)");
}

TEST_CASE("v with the wrong v head_dim is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.v.shape[3] = 64; }, error_code::wrong_shape,
               "v: expected v head_dim 32, got 64; shape is (3, 113, 2, 64)");
}

TEST_CASE("k with a batch that differs from q is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.k.shape[0] = 2; }, error_code::wrong_shape,
               "k: expected batch 3 (from q), got 2; shape is (2, 113, 2, 64)");
}

TEST_CASE("v with a key length that differs from k is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.v.shape[1] = 112; }, error_code::wrong_shape,
               "v: expected Lk 113 (from k), got 112; shape is (3, 112, 2, 32)");
}

TEST_CASE("q with a non-contiguous innermost dimension is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.q.strides[3] = 2; }, error_code::wrong_stride,
               "q: innermost dimension must be contiguous (stride 1), got stride 2");
}

TEST_CASE("k with a negative stride is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.k.strides[1] = -128; }, error_code::wrong_stride,
               "k: stride of dimension 1 must be positive, got -128");
}

TEST_CASE("v whose data pointer is not aligned to its 4-byte elements is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.v.data = static_cast<std::uint8_t*>(a.v.data) + 2; },
               error_code::misaligned_pointer, "v: data pointer is not aligned to its 4-byte elements");
}

TEST_CASE("lse whose strides give two elements one address is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.lse.strides[1] = 1; }, error_code::wrong_stride,
               "lse: strides (68, 1, 1) with shape (3, 4, 17) give two elements one address; an output needs "
               "its own place for each element");
}

TEST_CASE("output in a padded, permuted layout whose elements are distinct is accepted", "[runtime][validation]") {
  const auto problem = make_random_problem(aot_all_options::description, 3, 17, 113, 5);
  aot_call call(problem);
  attention_args args = call.args();
  std::vector<float> storage(3 * 17 * 4 * 40);
  // (B, Lq, H, Dv) stored as (B, H, Lq, Dv) with rows padded from 32 to 40.
  args.output.data = storage.data();
  args.output.strides[0] = 4 * 17 * 40, args.output.strides[1] = 40, args.output.strides[2] = 17 * 40;
  CHECK(aot_all_options::run(args).ok());
}

TEST_CASE("mask of the wrong shape is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.mask.shape[3] = 112; }, error_code::wrong_shape,
               "mask: expected Lk 113 (from k), got 112; shape is (3, 1, 17, 112)");
}

TEST_CASE("mask broadcast over heads must have 1 head", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.mask.shape[1] = 4; }, error_code::wrong_shape,
               "mask: expected 1 heads (broadcast), got 4; shape is (3, 4, 17, 113)");
}

TEST_CASE("key padding mask of float type is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.key_padding.type = dtype::f32; }, error_code::wrong_dtype,
               "key_padding: expected element type u8, got f32");
}

TEST_CASE("output of the wrong shape is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.output.shape[1] = 16; }, error_code::wrong_shape,
               "output: expected Lq 17 (from q), got 16; shape is (3, 16, 4, 32)");
}

TEST_CASE("lse of the wrong shape is rejected", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.lse.shape[1] = 2; }, error_code::wrong_shape,
               "lse: expected 4 heads, got 2; shape is (3, 2, 17)");
}

TEST_CASE("output that overlaps q is rejected (no in-place calls)", "[runtime][validation]") {
  expect_error([](attention_args& a) { a.q.data = a.output.data; }, error_code::wrong_shape,
               "output: overlaps q in memory; kernels do not run in place");
}

TEST_CASE("a tensor the description does not take is rejected", "[runtime][validation]") {
  const auto problem = make_random_problem(aot_all_options::description.return_lse(), 1, 7, 7, 5);
  aot_call call(problem);
  attention_args args = call.args();
  attention_desc without_lse = aot_all_options::description;
  without_lse.lse_output = false;
  const status s = validate(without_lse, args);
  CHECK_THAT(s.message(), Equals("lse: this kernel's description has no log-sum-exp output, but a tensor was given"));
  CHECK(s.code() == error_code::unexpected_tensor);
}

namespace {
// (B, X, Y, D) data as (B, Y, X, D): (B, L, H, D) to (B, H, L, D) and back.
std::vector<float> swap_middle_dims(const std::vector<float>& x, int B, int X, int Y, int D) {
  std::vector<float> out(x.size());
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < X; ++i)
      for (int j = 0; j < Y; ++j)
        for (int e = 0; e < D; ++e)
          out[((std::size_t(b) * Y + j) * X + i) * D + e] = x[((std::size_t(b) * X + i) * Y + j) * D + e];
  return out;
}
}  // namespace

TEST_CASE("any strides with a contiguous innermost dimension give the dense result", "[runtime][strides]") {
  const auto problem = make_random_problem(aot_all_options::description, 2, 17, 7, 8);
  aot_call dense(problem);
  REQUIRE(aot_all_options::run(dense.args()).ok());
  // The same q stored as (B, H, Lq, D) in memory, viewed as (B, Lq, H, D) through strides.
  const int B = 2, Lq = 17, H = 4, D = 64;
  const std::vector<float> q_bhld = swap_middle_dims(problem.q, B, Lq, H, D);
  aot_call strided(problem);
  attention_args args = strided.args();
  args.q = make_bhld_tensor(q_bhld.data(), dtype::f32, {B, H, Lq, D});
  REQUIRE(aot_all_options::run(args).ok());
  CHECK(strided.output() == dense.output());
}

TEST_CASE("every tensor stored (B, heads, L, D) gives the dense result, decoding, prefill and short keys", "[runtime][strides]") {
  const int B = 2, H = 4, KVH = 2, D = 64, Dv = 32;
  for (const auto& [Lq, Lk] : {std::pair{1, 700}, std::pair{3, 300}, std::pair{40, 120}, std::pair{20, 50}}) {
    CAPTURE(Lq, Lk);
    const auto problem = make_random_problem(aot_all_options::description, B, Lq, Lk, 9);
    aot_call dense(problem);
    REQUIRE(aot_all_options::run(dense.args()).ok());
    const auto q = swap_middle_dims(problem.q, B, Lq, H, D), k = swap_middle_dims(problem.k, B, Lk, KVH, D),
               v = swap_middle_dims(problem.v, B, Lk, KVH, Dv);
    std::vector<float> output(std::size_t(B) * Lq * H * Dv);
    aot_call strided(problem);
    attention_args args = strided.args();
    args.q = make_bhld_tensor(q.data(), dtype::f32, {B, H, Lq, D});
    args.k = make_bhld_tensor(k.data(), dtype::f32, {B, KVH, Lk, D});
    args.v = make_bhld_tensor(v.data(), dtype::f32, {B, KVH, Lk, Dv});
    args.output = make_bhld_tensor(output.data(), dtype::f32, {B, H, Lq, Dv});
    REQUIRE(aot_all_options::run(args).ok());
    CHECK(swap_middle_dims(output, B, H, Lq, Dv) == dense.output());
  }
}

TEST_CASE("an error inside the kernel is captured into the status, not printed and aborted", "[runtime][errors]") {
  // Validate against a description whose head_dim disagrees with the compiled kernel: validation
  // passes, and the kernel's own bounds check fails before it writes anything.
  attention_desc narrower = aot_all_options::description.head_dim(32);
  const auto problem = make_random_problem(narrower, 1, 7, 7, 5);
  aot_call call(problem);
  call.poison_outputs(poison);
  const detail::generated_entry general = [](void* context, halide_buffer_t* const* b) {
    return aot_all_options_halide_general(context, b[0], b[1], b[2], b[3], b[4], b[5], b[6]);
  };
  const detail::generated_entry variants[] = {general, general, general, general};
  const status s = detail::run_attention_kernel(narrower, call.args(), {variants});
  CHECK(s.code() == error_code::kernel_failed);
  CHECK_THAT(s.message(),
             Equals("kernel: Input buffer k is accessed at 63, which is beyond the max (31) in dimension 0"));
  CHECK(call.outputs_all_equal(poison));
}

TEST_CASE("batch 0 and Lq 0 succeed and write nothing", "[runtime][limits]") {
  for (auto [batch, queries] : {std::pair{0, 7}, std::pair{2, 0}}) {
    const auto problem = make_random_problem(aot_all_options::description, std::max(batch, 1), std::max(queries, 1), 7, 5);
    aot_call call(problem);
    call.poison_outputs(poison);
    attention_args args = call.args();
    for (tensor_view* t : {&args.q, &args.k, &args.v, &args.mask, &args.key_padding, &args.output, &args.lse})
      if (batch == 0) t->shape[0] = 0;
    if (queries == 0) args.q.shape[1] = args.mask.shape[2] = args.output.shape[1] = args.lse.shape[2] = 0;
    CHECK(aot_all_options::run(args).ok());
    CHECK(call.outputs_all_equal(poison));
  }
}

TEST_CASE("Lk 0 makes every row fully masked: output 0, lse -inf", "[runtime][limits]") {
  const auto problem = make_random_problem(aot_all_options::description, 2, 7, 1, 5);
  aot_call call(problem);
  call.poison_outputs(poison);
  attention_args args = call.args();
  args.k.shape[1] = args.v.shape[1] = args.mask.shape[3] = args.key_padding.shape[1] = 0;
  REQUIRE(aot_all_options::run(args).ok());
  for (float x : call.output()) CHECK(x == 0.0f);
  for (float x : call.lse()) CHECK((std::isinf(x) && x < 0));
}

TEST_CASE("a kernel generated without GPU targets refuses tensors on a CUDA device", "[runtime][gpu]") {
  expect_error(
      [](attention_args& a) {
        for (tensor_view* t : {&a.q, &a.k, &a.v, &a.mask, &a.key_padding, &a.output, &a.lse}) t->device = device_kind::cuda;
      },
      error_code::device_not_generated,
      "q: the call runs on cuda, for which this kernel has no code; generate it with a GPU target for cuda");
}

TEST_CASE("a kernel generated without GPU targets refuses to run host tensors on OpenCL", "[runtime][gpu]") {
  expect_error([](attention_args& a) { a.gpu.run_host_tensors_on = device_kind::opencl; },
               error_code::device_not_generated,
               "q: the call runs on opencl, for which this kernel has no code; generate it with a GPU target for "
               "opencl");
}

TEST_CASE("tensors of one call on two devices are rejected naming the first that differs", "[runtime][gpu]") {
  expect_error([](attention_args& a) { a.mask.device = device_kind::cuda; }, error_code::wrong_device,
               "mask: is on cuda but q is on host; one call's tensors must all be on one device");
}

TEST_CASE("a device tensor refuses the host as its device, naming it", "[runtime][gpu]") {
  float value = 1.0f;
  const device_tensor t(make_tensor(&value, {1}), device_kind::host);
  CHECK(t.result().code() == error_code::wrong_device);
  CHECK(t.result().message() == "device_tensor: the device must be cuda or opencl, not host");
}
