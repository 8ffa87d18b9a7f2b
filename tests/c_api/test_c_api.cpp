// The C API (attngen/c_api.h and the generated <name>.h), called from C code (c_callers.c): the
// same results, validation and messages as the C++ API, and no crash on what C callers can get wrong.
#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>
#include <string>

#include "aot_all_options.h"
#include "aot_all_options.hpp"
#include "aot_learned_alibi_slopes.h"
#include "aot_learned_alibi_slopes.hpp"
#include "aot_module_encoder.h"
#include "aot_module_encoder.hpp"
#include "attngen/c_api.h"
#include "attngen/runtime/detail/scratch_memory.hpp"
#include "c_api/c_callers.h"
#include "kernels/aot_call.hpp"
#include "kernels/aot_module_call.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

float* floats(const tensor_view& t) { return static_cast<float*>(t.data); }

// all_options_args (built in C) over a C++ test call's storage.
attngen_attention_args c_args(aot_call& call, int batch, int query_length, int key_length) {
  const attention_args a = call.args();
  return all_options_args(floats(a.q), floats(a.k), floats(a.v), floats(a.mask),
                          static_cast<std::uint8_t*>(a.key_padding.data), floats(a.output), floats(a.lse), batch,
                          query_length, key_length);
}

attention_problem all_options_problem(int batch, int query_length, int key_length) {
  return make_random_problem(aot_all_options::description, batch, query_length, key_length, 31);
}

}  // namespace

TEST_CASE("C API: an operator with every run-time tensor, called from C, matches the float64 reference", "[c_api]") {
  for (const auto [batch, query_length, key_length] : {std::tuple{3, 17, 113}, std::tuple{1, 113, 17}}) {
    const auto problem = all_options_problem(batch, query_length, key_length);
    aot_call call(problem);
    const attention_args a = call.args();
    attngen_error error;
    const int32_t code = run_all_options(floats(a.q), floats(a.k), floats(a.v), floats(a.mask),
                                         static_cast<std::uint8_t*>(a.key_padding.data), floats(a.output),
                                         floats(a.lse), batch, query_length, key_length, &error);
    INFO(problem.name() << ": " << error.message);
    REQUIRE(code == ATTNGEN_OK);
    CHECK(error.code == ATTNGEN_OK);
    CHECK(std::string(error.message).empty());
    const auto c = compare_with_reference(problem, reference_attention(problem), call.output(), call.lse());
    INFO(c.first_failure);
    CHECK(c.ok);
  }
}

TEST_CASE("C API: a wrong shape from C gets the C++ API's code and message, and nothing is written", "[c_api]") {
  const auto problem = all_options_problem(2, 9, 11);
  aot_call call(problem);
  attngen_attention_args args = c_args(call, 2, 9, 11);
  args.k.shape[2] = 3;
  attention_args cpp_args = call.args();
  cpp_args.k.shape[2] = 3;
  const status expected = aot_all_options::run(cpp_args);
  call.poison_outputs(0xA5);
  attngen_error error;
  CHECK(aot_all_options_run(&args, &error) == ATTNGEN_WRONG_SHAPE);
  CHECK(error.code == ATTNGEN_WRONG_SHAPE);
  CHECK(std::string(error.message) == expected.message());
  CHECK_THAT(error.message, Catch::Matchers::StartsWith("k: expected 2 kv heads"));
  CHECK(call.outputs_all_equal(0xA5));
}

TEST_CASE("C API: a null args pointer is a null_pointer error, not a crash", "[c_api]") {
  attngen_error error;
  CHECK(aot_all_options_run(nullptr, &error) == ATTNGEN_NULL_POINTER);
  CHECK(std::string(error.message) == "args: null pointer");
  CHECK(aot_module_encoder_run(nullptr, &error) == ATTNGEN_NULL_POINTER);
}

TEST_CASE("C API: without an error struct a call still returns the error code", "[c_api]") {
  const auto problem = all_options_problem(1, 5, 5);
  aot_call call(problem);
  attngen_attention_args args = c_args(call, 1, 5, 5);
  args.output.data = nullptr;
  CHECK(aot_all_options_run(&args, nullptr) == ATTNGEN_NULL_POINTER);
}

TEST_CASE("C API: an element type value outside attngen_dtype is refused, naming the tensor", "[c_api]") {
  const auto problem = all_options_problem(1, 5, 5);
  aot_call call(problem);
  attngen_attention_args args = c_args(call, 1, 5, 5);
  args.v.dtype = 17;
  attngen_error error;
  CHECK(aot_all_options_run(&args, &error) == ATTNGEN_WRONG_DTYPE);
  CHECK(std::string(error.message) == "v: unknown dtype value 17");
}

TEST_CASE("C API: a device value outside attngen_device is refused, naming the tensor", "[c_api]") {
  const auto problem = all_options_problem(1, 5, 5);
  aot_call call(problem);
  attngen_attention_args args = c_args(call, 1, 5, 5);
  args.mask.device = -1;
  attngen_error error;
  CHECK(aot_all_options_run(&args, &error) == ATTNGEN_WRONG_DEVICE);
  CHECK(std::string(error.message) == "mask: unknown device value -1");
  args.mask.device = ATTNGEN_HOST;
  args.gpu.run_host_tensors_on = 3;
  CHECK(aot_all_options_run(&args, &error) == ATTNGEN_WRONG_DEVICE);
  CHECK(std::string(error.message) == "gpu.run_host_tensors_on: unknown device value 3");
}

TEST_CASE("C API: a rank above 4 or below 0 is refused, naming the tensor", "[c_api]") {
  const auto problem = all_options_problem(1, 5, 5);
  aot_call call(problem);
  attngen_attention_args args = c_args(call, 1, 5, 5);
  const int64_t shape[7] = {1, 1, 1, 5, 1, 4, 64};
  args.q = attngen_dense_tensor(args.q.data, ATTNGEN_F32, 7, shape);
  attngen_error error;
  CHECK(aot_all_options_run(&args, &error) == ATTNGEN_WRONG_RANK);
  CHECK(std::string(error.message) == "q: rank 7 is outside 0 to 4");
  args.q.rank = -2;
  CHECK(aot_all_options_run(&args, &error) == ATTNGEN_WRONG_RANK);
  CHECK(std::string(error.message) == "q: rank -2 is outside 0 to 4");
}

TEST_CASE("C API: a dense tensor without a shape gets rank -1, which calls refuse", "[c_api]") {
  float data[4];
  const attngen_tensor t = attngen_dense_tensor(data, ATTNGEN_F32, 2, nullptr);
  CHECK(t.rank == -1);
}

TEST_CASE("C API: a dense tensor's strides are row-major, an empty dimension counting as 1", "[c_api]") {
  const int64_t shape[] = {2, 0, 3, 5};
  const attngen_tensor t = attngen_dense_tensor(nullptr, ATTNGEN_F16, 4, shape);
  CHECK(t.rank == 4);
  CHECK(t.dtype == ATTNGEN_F16);
  CHECK(t.device == ATTNGEN_HOST);
  CHECK(t.strides[0] == 15);
  CHECK(t.strides[1] == 15);
  CHECK(t.strides[2] == 5);
  CHECK(t.strides[3] == 1);
}

TEST_CASE("C API: a module called from C on state_dict weights gives bitwise the C++ API's result", "[c_api]") {
  const module_problem p = make_random_module_problem(aot_module_encoder::description, 2, 7, 9, 12);
  aot_module_call from_cpp(p), from_c(p);
  REQUIRE(aot_module_encoder::run(from_cpp.args()).ok());
  const packed_state_dict state(from_c);
  const mha_args a = from_c.args();
  attngen_error error;
  const int32_t code = run_module_encoder(
      reinterpret_cast<const float*>(state.in_proj_weight.data()), reinterpret_cast<const float*>(state.in_proj_bias.data()),
      floats(a.weights.out_weight), floats(a.weights.out_bias), floats(a.query), floats(a.key), floats(a.value),
      floats(a.output), floats(a.attn_weights), 2, 7, 9, &error);
  INFO(error.message);
  REQUIRE(code == ATTNGEN_OK);
  CHECK(from_c.output() == from_cpp.output());
  CHECK(from_c.weights() == from_cpp.weights());
}

TEST_CASE("C API: a state_dict with a missing key is an error and leaves the weights unwritten", "[c_api]") {
  float data[1] = {};
  const attngen_state_dict_tensor state[] = {{"in_proj_weight", data}, {"in_proj_bias", data}, {"out_proj.bias", data}};
  attngen_mha_weights weights;
  std::memset(&weights, 0x5A, sizeof weights);
  attngen_error error;
  CHECK(aot_module_encoder_weights_from_state_dict(state, 3, &weights, &error) == ATTNGEN_NULL_POINTER);
  CHECK(std::string(error.message) == "state_dict: `out_proj.weight` is missing");
  CHECK(reinterpret_cast<const unsigned char*>(&weights)[0] == 0x5A);
}

TEST_CASE("C API: a state_dict entry without a name is an error naming its index", "[c_api]") {
  float data[1] = {};
  const attngen_state_dict_tensor state[] = {{"in_proj_weight", data}, {nullptr, data}};
  attngen_mha_weights weights;
  attngen_error error;
  CHECK(aot_module_encoder_weights_from_state_dict(state, 2, &weights, &error) == ATTNGEN_NULL_POINTER);
  CHECK(std::string(error.message) == "state_dict: tensor 1 has no name");
  CHECK(aot_module_encoder_weights_from_state_dict(nullptr, 2, &weights, &error) == ATTNGEN_NULL_POINTER);
  CHECK(aot_module_encoder_weights_from_state_dict(state, 2, nullptr, &error) == ATTNGEN_NULL_POINTER);
}

TEST_CASE("C API: a message longer than the error buffer is cut to fit and NUL-terminated", "[c_api]") {
  float data[1] = {};
  const std::string long_name(2000, 'x');
  const attngen_state_dict_tensor state[] = {{long_name.c_str(), data}};
  attngen_mha_weights weights;
  attngen_error error;
  std::memset(error.message, 'z', sizeof error.message);
  CHECK(aot_module_encoder_weights_from_state_dict(state, 1, &weights, &error) == ATTNGEN_UNEXPECTED_TENSOR);
  const std::string message(error.message);
  CHECK(message.size() == ATTNGEN_ERROR_MESSAGE_SIZE - 1);
  CHECK_THAT(message, Catch::Matchers::StartsWith("state_dict: `xxx"));
}

TEST_CASE("C API: a kernel's record is the C++ API's kernel_record", "[c_api]") {
  CHECK(std::string(aot_all_options_record()) == kernel_record<aot_all_options>());
  CHECK_THAT(aot_module_encoder_record(), Catch::Matchers::StartsWith("attngen " ATTNGEN_TEST_VERSION
                                                                      " kernel aot_module_encoder\n"));
}

TEST_CASE("C API: error codes have the C++ enumerators' names", "[c_api]") {
  CHECK(std::string(attngen_error_code_name(ATTNGEN_OK)) == "ok");
  CHECK(std::string(attngen_error_code_name(ATTNGEN_WRONG_SHAPE)) == "wrong_shape");
  CHECK(std::string(attngen_error_code_name(ATTNGEN_KERNEL_FAILED)) == "kernel_failed");
  CHECK(std::string(attngen_error_code_name(ATTNGEN_MISALIGNED_POINTER)) == "misaligned_pointer");
  CHECK(std::string(attngen_error_code_name(ATTNGEN_READ_ONLY_OUTPUT)) == "read_only_output");
  CHECK(std::string(attngen_error_code_name(ATTNGEN_COMMUNICATION_FAILED)) == "communication_failed");
  CHECK(std::string(attngen_error_code_name(14)) == "unknown");
  CHECK(std::string(attngen_error_code_name(-1)) == "unknown");
}

TEST_CASE("C API: a backward pass called from C writes the C++ call's gradients, a learned tensor's included",
          "[c_api][backward]") {
  const attention_desc& desc = aot_learned_alibi_slopes::description;
  const int B = 2, Lq = 17, Lk = 23;
  const auto problem = make_random_problem(desc, B, Lq, Lk, 12);
  aot_call forward(problem);
  REQUIRE(aot_learned_alibi_slopes::run(forward.args()).ok());
  attention_args a = forward.args();
  std::vector<float> d_output = make_random_output_gradient(problem, 13);
  std::vector<float> dq(problem.q.size()), dk(problem.k.size()), dv(problem.v.size()), d_slopes(4);
  std::vector<float> cpp_dq(dq.size()), cpp_dk(dk.size()), cpp_dv(dv.size()), cpp_d_slopes(4);
  attngen_error error;
  REQUIRE(run_learned_slopes_backward(floats(a.q), floats(a.k), floats(a.v), floats(a.captures[0]), floats(a.output),
                                      floats(a.lse), d_output.data(), dq.data(), dk.data(), dv.data(), d_slopes.data(),
                                      B, Lq, Lk, &error) == ATTNGEN_OK);
  REQUIRE(aot_learned_alibi_slopes::backward(
              a.q, a.k, a.v, a.captures[0], a.output, a.lse, make_tensor(d_output.data(), {B, Lq, 4, 32}),
              make_tensor(cpp_dq.data(), {B, Lq, 4, 32}), make_tensor(cpp_dk.data(), {B, Lk, 2, 32}),
              make_tensor(cpp_dv.data(), {B, Lk, 2, 32}), make_tensor(cpp_d_slopes.data(), {4}))
              .ok());
  CHECK(dq == cpp_dq);
  CHECK(dk == cpp_dk);
  CHECK(dv == cpp_dv);
  CHECK(d_slopes == cpp_d_slopes);
  CHECK(std::any_of(d_slopes.begin(), d_slopes.end(), [](float x) { return x != 0.0f; }));
}

TEST_CASE("C API: a backward call from C without arguments gets a null-pointer error, not a crash",
          "[c_api][backward]") {
  attngen_error error;
  CHECK(aot_learned_alibi_slopes_backward(nullptr, &error) == ATTNGEN_NULL_POINTER);
  CHECK(error.code == ATTNGEN_NULL_POINTER);
  CHECK(std::string(error.message) == "args: null pointer");
}

TEST_CASE("C API: attngen_merge gives the C++ merge's bits, and its messages for a part of another shape", "[c_api][merge]") {
  const std::int64_t B = 2, Lq = 3, H = 4, Dv = 5;
  std::vector<float> out_a(B * Lq * H * Dv), out_b(out_a.size()), lse_a(B * H * Lq), lse_b(lse_a.size());
  for (std::size_t n = 0; n < out_a.size(); ++n) {
    out_a[n] = float(n % 7) * 0.25f - 0.5f;
    out_b[n] = float(n % 5) * -0.125f + 0.25f;
  }
  for (std::size_t n = 0; n < lse_a.size(); ++n) {
    lse_a[n] = float(n % 3) - 1.0f;
    lse_b[n] = n % 4 == 0 ? -INFINITY : float(n % 6) * 0.5f;
  }
  std::vector<float> c_out(out_a.size()), c_lse(lse_a.size()), cpp_out(out_a.size()), cpp_lse(lse_a.size());
  attngen_error error{};
  REQUIRE(merge_two(out_a.data(), lse_a.data(), out_b.data(), lse_b.data(), c_out.data(), c_lse.data(), B, Lq, H, Dv,
                    &error) == ATTNGEN_OK);
  const attention_partial parts[] = {{make_tensor(out_a.data(), {B, Lq, H, Dv}), make_tensor(lse_a.data(), {B, H, Lq})},
                                     {make_tensor(out_b.data(), {B, Lq, H, Dv}), make_tensor(lse_b.data(), {B, H, Lq})}};
  REQUIRE(merge(parts, 2, make_tensor(cpp_out.data(), {B, Lq, H, Dv}), make_tensor(cpp_lse.data(), {B, H, Lq})).ok());
  CHECK(std::memcmp(c_out.data(), cpp_out.data(), c_out.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(c_lse.data(), cpp_lse.data(), c_lse.size() * sizeof(float)) == 0);

  // A second part one query short: the C++ message, and the code.
  const std::int64_t short_shape[] = {B, Lq - 1, H, Dv};
  attngen_partial c_parts[2] = {{attngen_dense_tensor(out_a.data(), ATTNGEN_F32, 4, std::array<std::int64_t, 4>{B, Lq, H, Dv}.data()),
                                 attngen_dense_tensor(lse_a.data(), ATTNGEN_F32, 3, std::array<std::int64_t, 3>{B, H, Lq}.data())},
                                {attngen_dense_tensor(out_b.data(), ATTNGEN_F32, 4, short_shape),
                                 attngen_dense_tensor(lse_b.data(), ATTNGEN_F32, 3, std::array<std::int64_t, 3>{B, H, Lq}.data())}};
  const attngen_tensor none{};
  const std::int32_t code =
      attngen_merge(c_parts, 2, attngen_dense_tensor(c_out.data(), ATTNGEN_F32, 4, std::array<std::int64_t, 4>{B, Lq, H, Dv}.data()),
                    attngen_dense_tensor(c_lse.data(), ATTNGEN_F32, 3, std::array<std::int64_t, 3>{B, H, Lq}.data()), none,
                    &error);
  CHECK(code == ATTNGEN_WRONG_SHAPE);
  CHECK(std::string(error.message).rfind("parts[1].output: expected Lq 3", 0) == 0);
  CHECK(attngen_merge(nullptr, 1, none, none, none, &error) == ATTNGEN_NULL_POINTER);
  CHECK(std::string(error.message) == "parts: null with a count of 1");
}

TEST_CASE("C API: attngen_release_cached_memory frees the scratch a module call kept for the next", "[c_api]") {
  const auto problem = make_random_module_problem(aot_module_encoder::description, 2, 64, 64, 9);
  aot_module_call call(problem);
  REQUIRE(aot_module_encoder::run(call.args()).ok());
  REQUIRE(detail::scratch_memory_statistics().cached_bytes > 0);
  attngen_release_cached_memory();
  CHECK(detail::scratch_memory_statistics().cached_bytes == 0);
}
