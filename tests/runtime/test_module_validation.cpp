// Bad input to a generated module kernel returns an error naming the argument, expected and actual
// values, and writes nothing. Uses the AOT module with every option: E32 H8/2 kdim12 vdim20,
// bias_kv, zero attention, batch_first, boolean key padding, additive (B*H, L, S) mask, per-head weights.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "aot_module_all_options.hpp"
#include "aot_module_encoder.hpp"
#include "kernels/aot_module_call.hpp"

using namespace attngen;
using namespace attngen::testing;
using Catch::Matchers::Equals;

namespace {

constexpr std::uint8_t poison = 0xAB;

void expect_error(const std::function<void(mha_args&)>& break_it, error_code code, const std::string& message) {
  const auto problem = make_random_module_problem(aot_module_all_options::description, 3, 17, 23, 5);
  aot_module_call call(problem);
  call.poison_outputs(poison);
  mha_args args = call.args();
  break_it(args);
  const status s = aot_module_all_options::run(args);
  CHECK_THAT(s.message(), Equals(message));
  CHECK(s.code() == code);
  CHECK(call.outputs_all_equal(poison));
}

}  // namespace

TEST_CASE("module: valid arguments pass validation and the call writes its outputs", "[runtime][validation]") {
  const auto problem = make_random_module_problem(aot_module_all_options::description, 3, 17, 23, 5);
  aot_module_call call(problem);
  call.poison_outputs(poison);
  const status s = aot_module_all_options::run(call.args());
  CHECK(s.ok());
  CHECK(!call.outputs_all_equal(poison));
}

TEST_CASE("module: the typed call takes the description's tensors by name, the weights whole, and gives run(args)'s "
          "result",
          "[runtime][typed]") {
  auto problem = make_random_module_problem(aot_module_all_options::description, 2, 9, 11, 7);
  problem.training = true;
  aot_module_call generic(problem), typed(problem);
  const mha_args a = typed.args();
  REQUIRE(aot_module_all_options::run(generic.args()).ok());
  REQUIRE(aot_module_all_options::run(a.query, a.key, a.value, a.weights, a.key_padding_mask, a.attn_mask, a.output,
                                      a.attn_weights, a.training, a.seed)
              .ok());
  CHECK(typed.output() == generic.output());
  CHECK(typed.weights() == generic.weights());
}

TEST_CASE("module: the typed call of a module without masks or dropout takes query, key, value, weights, output "
          "and attn_weights",
          "[runtime][typed]") {
  const auto problem = make_random_module_problem(aot_module_encoder::description, 1, 4, 6, 3);
  aot_module_call generic(problem), typed(problem);
  const mha_args a = typed.args();
  REQUIRE(aot_module_encoder::run(generic.args()).ok());
  REQUIRE(aot_module_encoder::run(a.query, a.key, a.value, a.weights, a.output, a.attn_weights).ok());
  CHECK(typed.output() == generic.output());
}

TEST_CASE("module: key with the wrong feature count names kdim", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.key.shape[2] = 10; }, error_code::wrong_shape,
               "key: expected kdim 12, got 10; shape is (3, 23, 10)");
}

TEST_CASE("module: value with another key length names where S comes from", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.value.shape[1] = 22; }, error_code::wrong_shape,
               "value: expected S 23 (from key), got 22; shape is (3, 22, 20)");
}

TEST_CASE("module: a missing projection bias is a null pointer named by its field", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.weights.k_bias = {}; }, error_code::null_pointer,
               "weights.k_bias: data pointer is null");
}

TEST_CASE("module: k_weight with query-head rows instead of kv-head rows is rejected", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.weights.k_weight.shape[0] = 32; }, error_code::wrong_shape,
               "weights.k_weight: expected out features (kv_heads x head_dim) 8, got 32; shape is (32, 12)");
}

TEST_CASE("module: a boolean attn_mask where the description adds floats is rejected", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.attn_mask.type = dtype::u8; }, error_code::wrong_dtype,
               "attn_mask: expected element type f32, got u8");
}

TEST_CASE("module: attn_mask of 4 dimensions where (B x heads, L, S) is described is rejected", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.attn_mask.rank = 4; }, error_code::wrong_rank,
               "attn_mask: expected rank 3 (B x heads, L, S), got rank 4");
}

TEST_CASE("module: attn_weights without the appended keys' columns is rejected", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.attn_weights.shape[3] = 23; }, error_code::wrong_shape,
               "attn_weights: expected S' (keys with appended ones) 25 (from key), got 23; shape is (3, 8, 17, 23)");
}

TEST_CASE("module: output overlapping the query is rejected (no in-place calls)", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.output.data = a.query.data; }, error_code::wrong_shape,
               "output: overlaps query in memory; kernels do not run in place");
}

TEST_CASE("module: attn_weights whose strides give two elements one address is rejected", "[runtime][validation]") {
  expect_error([](mha_args& a) { a.attn_weights.strides[1] = 25; }, error_code::wrong_stride,
               "attn_weights: strides (3400, 25, 25, 1) with shape (3, 8, 17, 25) give two elements one address; "
               "an output needs its own place for each element");
}

TEST_CASE("module: a tensor the description does not take is rejected", "[runtime][validation]") {
  const auto problem = make_random_module_problem(aot_module_encoder::description, 2, 5, 5, 3);
  aot_module_call call(problem);
  mha_args args = call.args();
  args.key_padding_mask = args.query;
  const status s = aot_module_encoder::run(args);
  CHECK_THAT(s.message(),
             Equals("key_padding_mask: this kernel's description has no key_padding_mask, but a tensor was given"));
  CHECK(s.code() == error_code::unexpected_tensor);
}

TEST_CASE("module: state_dict keys that are missing, unknown or repeated are named", "[runtime][validation]") {
  constexpr auto desc = aot_module_encoder::description;
  const float data[1] = {};
  mha_weights weights;
  const state_dict_tensor missing[] = {{"in_proj_weight", data}, {"in_proj_bias", data}, {"out_proj.weight", data}};
  CHECK_THAT(weights_from_state_dict(desc, missing, weights).message(), Equals("state_dict: `out_proj.bias` is missing"));
  const state_dict_tensor unknown[] = {{"q_proj_weight", data}};
  CHECK_THAT(weights_from_state_dict(desc, unknown, weights).message(),
             Equals("state_dict: `q_proj_weight` is not a weight of this description's module"));
  const state_dict_tensor repeated[] = {{"in_proj_bias", data}, {"in_proj_bias", data}};
  CHECK_THAT(weights_from_state_dict(desc, repeated, weights).message(), Equals("state_dict: `in_proj_bias` given twice"));
}

namespace {

// The views weights_from_state_dict gives for aot_module_encoder (E = 64, packed, with bias): in
// place in the given arrays, dense, read-only.
void check_encoder_weights(const mha_weights& w, const float* in_proj_weight, const float* in_proj_bias,
                           const float* out_proj_weight, const float* out_proj_bias) {
  constexpr std::int64_t E = 64;
  const auto check = [](const tensor_view& view, const float* data, std::int64_t rows, std::int64_t columns) {
    CHECK(view.data == data);
    CHECK(view.type == dtype::f32);
    CHECK(view.read_only);
    if (columns == 0) {
      REQUIRE(view.rank == 1);
      CHECK(view.shape[0] == rows);
      CHECK(view.strides[0] == 1);
    } else {
      REQUIRE(view.rank == 2);
      CHECK(view.shape[0] == rows);
      CHECK(view.shape[1] == columns);
      CHECK(view.strides[0] == columns);
      CHECK(view.strides[1] == 1);
    }
  };
  check(w.q_weight, in_proj_weight, E, E);
  check(w.k_weight, in_proj_weight + E * E, E, E);
  check(w.v_weight, in_proj_weight + 2 * E * E, E, E);
  check(w.q_bias, in_proj_bias, E, 0);
  check(w.k_bias, in_proj_bias + E, E, 0);
  check(w.v_bias, in_proj_bias + 2 * E, E, 0);
  check(w.out_weight, out_proj_weight, E, E);
  check(w.out_bias, out_proj_bias, E, 0);
  CHECK(w.bias_k.empty());
  CHECK(w.bias_v.empty());
}

}  // namespace

TEST_CASE("module: weights_from_state_dict leaves the weights as they were when it fails", "[runtime][validation]") {
  const float data[1] = {};
  mha_weights weights;
  weights.out_bias = make_tensor(data, {1});
  const state_dict_tensor missing[] = {{"in_proj_weight", data}, {"in_proj_bias", data}, {"out_proj.weight", data}};
  REQUIRE(!weights_from_state_dict(aot_module_encoder::description, missing, weights).ok());
  CHECK(weights.out_bias.data == data);
  CHECK(weights.q_weight.empty());
}

TEST_CASE("module: weights_from_state_dict takes a std::array, a std::vector or a C array of tensors",
          "[runtime][validation]") {
  constexpr auto desc = aot_module_encoder::description;
  std::vector<float> in_proj_weight(3 * 64 * 64), in_proj_bias(3 * 64), out_proj_weight(64 * 64), out_proj_bias(64);
  const float *w_in = in_proj_weight.data(), *b_in = in_proj_bias.data(), *w_out = out_proj_weight.data(),
              *b_out = out_proj_bias.data();
  {
    const std::array<state_dict_tensor, 4> state = {
        {{"in_proj_weight", w_in}, {"in_proj_bias", b_in}, {"out_proj.weight", w_out}, {"out_proj.bias", b_out}}};
    mha_weights weights;
    const status s = weights_from_state_dict(desc, state, weights);
    INFO(s.message());
    REQUIRE(s.ok());
    check_encoder_weights(weights, w_in, b_in, w_out, b_out);
  }
  {
    // Any order, in a (non-const) vector.
    std::vector<state_dict_tensor> state = {
        {"out_proj.bias", b_out}, {"out_proj.weight", w_out}, {"in_proj_bias", b_in}, {"in_proj_weight", w_in}};
    mha_weights weights;
    const status s = weights_from_state_dict(desc, state, weights);
    INFO(s.message());
    REQUIRE(s.ok());
    check_encoder_weights(weights, w_in, b_in, w_out, b_out);
  }
  {
    const state_dict_tensor state[] = {
        {"in_proj_bias", b_in}, {"in_proj_weight", w_in}, {"out_proj.bias", b_out}, {"out_proj.weight", w_out}};
    mha_weights weights;
    const status s = weights_from_state_dict(desc, state, weights);
    INFO(s.message());
    REQUIRE(s.ok());
    check_encoder_weights(weights, w_in, b_in, w_out, b_out);
  }
  {
    // An empty range: the first key is missing.
    mha_weights weights;
    CHECK_THAT(weights_from_state_dict(desc, std::vector<state_dict_tensor>{}, weights).message(),
               Equals("state_dict: `in_proj_weight` is missing"));
  }
}

TEST_CASE("module: self-attention takes no key and value, or the query's own view, and rejects another tensor",
          "[runtime][validation]") {
  constexpr auto self = validated<multihead_attention().embed_dim(16).heads(2).self_attention(true)>();
  const auto problem = make_random_module_problem(self, 2, 5, 5, 3);
  aot_module_call call(problem);
  mha_args args = call.args();
  CHECK(validate(self, args).ok());
  args.key = args.value = args.query;
  CHECK(validate(self, args).ok());
  std::vector<float> other(2 * 5 * 16);
  args.value = make_tensor(other.data(), {5, 2, 16});
  const status s = validate(self, args);
  CHECK_THAT(s.message(),
             Equals("value: this kernel is self-attention (it reads the query); pass no tensor or the query's own view"));
  CHECK(s.code() == error_code::unexpected_tensor);
}

TEST_CASE("module: tensors on a GPU the kernel was not generated for are refused", "[runtime][gpu]") {
  expect_error(
      [](mha_args& a) {
        mha_weights& w = a.weights;
        for (tensor_view* t : {&a.query, &a.key, &a.value, &w.q_weight, &w.k_weight, &w.v_weight, &w.q_bias, &w.k_bias,
                               &w.v_bias, &w.bias_k, &w.bias_v, &w.out_weight, &w.out_bias, &a.key_padding_mask,
                               &a.attn_mask, &a.output, &a.attn_weights})
          t->device = device_kind::cuda;
      },
      error_code::device_not_generated,
      "query: the call runs on cuda, for which this kernel has no code; generate it with a GPU target for cuda");
}

TEST_CASE("module: host tensors asked to run on a GPU the kernel was not generated for are refused",
          "[runtime][gpu]") {
  expect_error([](mha_args& a) { a.gpu.run_host_tensors_on = device_kind::opencl; }, error_code::device_not_generated,
               "query: the call runs on opencl, for which this kernel has no code; generate it with a GPU target for "
               "opencl");
}
