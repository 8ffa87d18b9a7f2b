#include "attngen/c_api.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "attngen/runtime/detail/c_bridge.hpp"
#include "caught_exception.hpp"
#include "dense_layout.hpp"

namespace attngen::detail {

namespace {

static_assert(ATTNGEN_MAX_RANK == tensor_view::max_rank);
static_assert(ATTNGEN_MAX_CAPTURED_TENSORS == capture_table::max_tensors);
static_assert(ATTNGEN_MAX_CAPTURED_SCALARS == capture_table::max_scalars);
static_assert(ATTNGEN_F32 == int(dtype::f32) && ATTNGEN_F16 == int(dtype::f16) && ATTNGEN_BF16 == int(dtype::bf16) &&
              ATTNGEN_U8 == int(dtype::u8) && ATTNGEN_I32 == int(dtype::i32));
static_assert(ATTNGEN_HOST == int(device_kind::host) && ATTNGEN_CUDA == int(device_kind::cuda) &&
              ATTNGEN_OPENCL == int(device_kind::opencl));
static_assert(ATTNGEN_NULL_POINTER == int(error_code::null_pointer) &&
              ATTNGEN_UNEXPECTED_TENSOR == int(error_code::unexpected_tensor) &&
              ATTNGEN_WRONG_RANK == int(error_code::wrong_rank) && ATTNGEN_WRONG_SHAPE == int(error_code::wrong_shape) &&
              ATTNGEN_WRONG_STRIDE == int(error_code::wrong_stride) && ATTNGEN_WRONG_DTYPE == int(error_code::wrong_dtype) &&
              ATTNGEN_TOO_LARGE == int(error_code::too_large) && ATTNGEN_WRONG_DEVICE == int(error_code::wrong_device) &&
              ATTNGEN_DEVICE_NOT_GENERATED == int(error_code::device_not_generated) &&
              ATTNGEN_KERNEL_FAILED == int(error_code::kernel_failed) &&
              ATTNGEN_MISALIGNED_POINTER == int(error_code::misaligned_pointer) &&
              ATTNGEN_READ_ONLY_OUTPUT == int(error_code::read_only_output));

std::int32_t report(const status& s, attngen_error* error) {
  if (error != nullptr) {
    error->code = std::int32_t(s.code());
    const std::size_t length = std::min(s.message().size(), std::size_t(ATTNGEN_ERROR_MESSAGE_SIZE - 1));
    std::memcpy(error->message, s.message().data(), length);
    error->message[length] = '\0';
  }
  return std::int32_t(s.code());
}

// Runs `body` (which returns a status), turning a C++ exception into an error: none may reach C.
// `doing` names what the body does, for the message ("out of memory while <doing>").
template <typename Body>
std::int32_t guarded(attngen_error* error, const char* doing, Body body) noexcept {
  try {
    return report(body(), error);
  } catch (...) {
    return report(status_of_caught_exception(doing), error);
  }
}

// Converts one tensor; `name` as the C++ validation names it.
status convert(const attngen_tensor& from, const char* name, tensor_view& to) {
  if (from.dtype < ATTNGEN_F32 || from.dtype > ATTNGEN_I32)
    return status(error_code::wrong_dtype, std::string(name) + ": unknown dtype value " + std::to_string(from.dtype));
  if (from.device < ATTNGEN_HOST || from.device > ATTNGEN_OPENCL)
    return status(error_code::wrong_device, std::string(name) + ": unknown device value " + std::to_string(from.device));
  to.data = from.data;
  to.type = dtype(from.dtype);
  to.rank = from.rank;
  to.device = device_kind(from.device);
  const int dims = std::clamp(from.rank, 0, int(tensor_view::max_rank));
  for (int d = 0; d < dims; ++d) {
    to.shape[d] = from.shape[d];
    to.strides[d] = from.strides[d];
  }
  return {};
}

attngen_tensor to_c(const tensor_view& from) {
  attngen_tensor to{};
  to.data = from.data;
  to.dtype = std::int32_t(from.type);
  to.rank = from.rank;
  to.device = std::int32_t(from.device);
  for (int d = 0; d < std::min(from.rank, int(tensor_view::max_rank)); ++d) {
    to.shape[d] = from.shape[d];
    to.strides[d] = from.strides[d];
  }
  return to;
}

status convert(const attngen_gpu_options& from, gpu_options& to) {
  if (from.run_host_tensors_on < ATTNGEN_HOST || from.run_host_tensors_on > ATTNGEN_OPENCL)
    return status(error_code::wrong_device,
                  "gpu.run_host_tensors_on: unknown device value " + std::to_string(from.run_host_tensors_on));
  to.run_host_tensors_on = device_kind(from.run_host_tensors_on);
  to.cuda_context = from.cuda_context;
  to.cuda_stream = from.cuda_stream;
  return {};
}

// The tensors of a call with their names, C and C++ side by side.
struct tensor_pair {
  const char* name;
  const attngen_tensor* from;
  tensor_view* to;
};

status convert_all(const std::vector<tensor_pair>& pairs) {
  for (const tensor_pair& p : pairs)
    if (status s = convert(*p.from, p.name, *p.to); !s) return s;
  return {};
}

std::vector<tensor_pair> weight_pairs(const attngen_mha_weights& from, mha_weights& to) {
  return {{"weights.q_weight", &from.q_weight, &to.q_weight},  {"weights.k_weight", &from.k_weight, &to.k_weight},
          {"weights.v_weight", &from.v_weight, &to.v_weight},  {"weights.q_bias", &from.q_bias, &to.q_bias},
          {"weights.k_bias", &from.k_bias, &to.k_bias},        {"weights.v_bias", &from.v_bias, &to.v_bias},
          {"weights.bias_k", &from.bias_k, &to.bias_k},        {"weights.bias_v", &from.bias_v, &to.bias_v},
          {"weights.out_weight", &from.out_weight, &to.out_weight}, {"weights.out_bias", &from.out_bias, &to.out_bias}};
}

}  // namespace

std::int32_t run_from_c(const attngen_attention_args* args, attngen_error* error, attention_run run) noexcept {
  return guarded(error, "converting the C arguments of an attention kernel call", [&]() -> status {
    if (args == nullptr) return status(error_code::null_pointer, "args: null pointer");
    attention_args converted;
    std::vector<tensor_pair> pairs = {{"q", &args->q, &converted.q},
                                      {"k", &args->k, &converted.k},
                                      {"v", &args->v, &converted.v},
                                      {"mask", &args->mask, &converted.mask},
                                      {"key_padding", &args->key_padding, &converted.key_padding},
                                      {"output", &args->output, &converted.output},
                                      {"lse", &args->lse, &converted.lse}};
    static constexpr const char* capture_slots[] = {"captures[0]", "captures[1]", "captures[2]", "captures[3]"};
    for (int n = 0; n < capture_table::max_tensors; ++n)
      pairs.push_back({capture_slots[n], &args->captures[n], &converted.captures[n]});
    if (status s = convert_all(pairs); !s) return s;
    std::copy(std::begin(args->scalars), std::end(args->scalars), converted.scalars);
    if (status s = convert(args->gpu, converted.gpu); !s) return s;
    return run(converted);
  });
}

std::int32_t run_from_c(const attngen_mha_args* args, attngen_error* error, module_run run) noexcept {
  return guarded(error, "converting the C arguments of a module kernel call", [&]() -> status {
    if (args == nullptr) return status(error_code::null_pointer, "args: null pointer");
    mha_args converted;
    // In the order the C++ validation checks them.
    std::vector<tensor_pair> pairs = {{"query", &args->query, &converted.query},
                                      {"key", &args->key, &converted.key},
                                      {"value", &args->value, &converted.value}};
    const std::vector<tensor_pair> weights = weight_pairs(args->weights, converted.weights);
    pairs.insert(pairs.end(), weights.begin(), weights.end());
    pairs.insert(pairs.end(), {{"key_padding_mask", &args->key_padding_mask, &converted.key_padding_mask},
                               {"attn_mask", &args->attn_mask, &converted.attn_mask},
                               {"output", &args->output, &converted.output},
                               {"attn_weights", &args->attn_weights, &converted.attn_weights}});
    if (status s = convert_all(pairs); !s) return s;
    converted.training = args->training != 0;
    converted.seed = args->seed;
    if (status s = convert(args->gpu, converted.gpu); !s) return s;
    return run(converted);
  });
}

std::int32_t weights_from_state_dict_from_c(const mha_desc& desc, const attngen_state_dict_tensor* tensors,
                                            std::size_t count, attngen_mha_weights* weights,
                                            attngen_error* error) noexcept {
  return guarded(error, "reading the state_dict", [&]() -> status {
    if (weights == nullptr) return status(error_code::null_pointer, "weights: null pointer");
    if (tensors == nullptr && count > 0) return status(error_code::null_pointer, "state_dict: null pointer");
    std::vector<state_dict_tensor> converted;
    for (std::size_t n = 0; n < count; ++n) {
      if (tensors[n].name == nullptr)
        return status(error_code::null_pointer, "state_dict: tensor " + std::to_string(n) + " has no name");
      converted.push_back({tensors[n].name, tensors[n].data});
    }
    mha_weights viewed;
    if (status s = weights_from_state_dict(desc, converted, viewed); !s) return s;
    *weights = attngen_mha_weights{to_c(viewed.q_weight), to_c(viewed.k_weight), to_c(viewed.v_weight),
                                   to_c(viewed.q_bias),   to_c(viewed.k_bias),   to_c(viewed.v_bias),
                                   to_c(viewed.bias_k),   to_c(viewed.bias_v),   to_c(viewed.out_weight),
                                   to_c(viewed.out_bias)};
    return {};
  });
}

}  // namespace attngen::detail

extern "C" {

attngen_tensor attngen_dense_tensor(void* data, int32_t dtype, int32_t rank, const int64_t* shape) {
  attngen_tensor tensor{};
  tensor.data = data;
  tensor.dtype = dtype;
  tensor.rank = rank;
  if (rank > 0 && shape == nullptr) tensor.rank = -1;
  if (tensor.rank < 0 || tensor.rank > ATTNGEN_MAX_RANK) return tensor;
  std::copy(shape, shape + rank, tensor.shape);
  attngen::detail::dense_strides(tensor.shape, rank, tensor.strides);
  return tensor;
}

const char* attngen_error_code_name(int32_t code) {
  static constexpr const char* names[] = {"ok",          "null_pointer", "unexpected_tensor", "wrong_rank",
                                          "wrong_shape", "wrong_stride", "wrong_dtype",       "too_large",
                                          "wrong_device", "device_not_generated", "kernel_failed",
                                          "misaligned_pointer", "read_only_output"};
  return code >= 0 && code < int32_t(std::size(names)) ? names[code] : "unknown";
}

void attngen_set_num_threads(int32_t threads) { attngen::set_num_threads(threads); }

}  // extern "C"
