#include "attngen/c_api.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "attngen/runtime/detail/c_bridge.hpp"
#include "attngen/runtime/detail/dense_layout.hpp"
#include "attngen/runtime/merge.hpp"
#include "attention_views.hpp"
#include "backward_views.hpp"
#include "caught_exception.hpp"
#include "module_views.hpp"

namespace attngen::detail {

namespace {

static_assert(ATTNGEN_MAX_RANK == tensor_view::max_rank);
static_assert(ATTNGEN_MAX_CAPTURED_TENSORS == capture_table::max_tensors);
static_assert(ATTNGEN_MAX_CAPTURED_SCALARS == capture_table::max_scalars);
static_assert(ATTNGEN_F32 == int(dtype::f32) && ATTNGEN_F16 == int(dtype::f16) && ATTNGEN_BF16 == int(dtype::bf16) &&
              ATTNGEN_U8 == int(dtype::u8) && ATTNGEN_I32 == int(dtype::i32) && ATTNGEN_I8 == int(dtype::i8));
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
              ATTNGEN_READ_ONLY_OUTPUT == int(error_code::read_only_output) &&
              ATTNGEN_COMMUNICATION_FAILED == int(error_code::communication_failed));

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
  if (from.dtype < ATTNGEN_F32 || from.dtype > ATTNGEN_I8)
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

// Converts every tensor slot of `table` from the C struct into the C++ one, in the schema's order
// (the order validation checks them), naming each as validation does. The C structs' members have the
// C++ ones' names, so one slot-to-member map (given_view) serves both.
template <typename Table, typename From, typename To>
status convert_tensors(const Table& table, const From& from, To& to) {
  for (const auto& argument : table)
    if (const attngen_tensor* tensor = given_view(from, argument))
      if (status s = convert(*tensor, argument.name.data(), *given_view(to, argument)); !s) return s;
  return {};
}

}  // namespace

std::int32_t run_from_c(const attention_desc& desc, const attngen_attention_args* args, attngen_error* error,
                        attention_run run) noexcept {
  return guarded(error, "converting the C arguments of an attention kernel call", [&]() -> status {
    if (args == nullptr) return status(error_code::null_pointer, "args: null pointer");
    attention_args converted;
    if (status s = convert_tensors(argument_table(desc), *args, converted); !s) return s;
    std::copy(std::begin(args->scalars), std::end(args->scalars), converted.scalars);
    if (status s = convert(args->gpu, converted.gpu); !s) return s;
    return run(converted);
  });
}

std::int32_t run_from_c(const attention_desc& desc, const attngen_attention_backward_args* args, attngen_error* error,
                        backward_run run) noexcept {
  return guarded(error, "converting the C arguments of a backward call", [&]() -> status {
    if (args == nullptr) return status(error_code::null_pointer, "args: null pointer");
    attention_backward_args converted;
    if (status s = convert_tensors(backward_argument_table(desc), *args, converted); !s) return s;
    std::copy(std::begin(args->scalars), std::end(args->scalars), converted.scalars);
    if (status s = convert(args->gpu, converted.gpu); !s) return s;
    return run(converted);
  });
}

std::int32_t run_from_c(const mha_desc& desc, const attngen_mha_backward_args* args, attngen_error* error,
                        module_backward_run run) noexcept {
  return guarded(error, "converting the C arguments of a module's backward call", [&]() -> status {
    if (args == nullptr) return status(error_code::null_pointer, "args: null pointer");
    mha_backward_args converted;
    if (status s = convert_tensors(module_backward_argument_table(desc), *args, converted); !s) return s;
    converted.training = args->training != 0;
    converted.seed = args->seed;
    if (status s = convert(args->gpu, converted.gpu); !s) return s;
    return run(converted);
  });
}

std::int32_t run_from_c(const mha_desc& desc, const attngen_mha_args* args, attngen_error* error,
                        module_run run) noexcept {
  return guarded(error, "converting the C arguments of a module kernel call", [&]() -> status {
    if (args == nullptr) return status(error_code::null_pointer, "args: null pointer");
    mha_args converted;
    if (status s = convert_tensors(argument_table(desc), *args, converted); !s) return s;
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
    mha_args viewed;
    if (status s = weights_from_state_dict(desc, converted, viewed.weights); !s) return s;
    attngen_mha_args written{};
    for (const module_argument& argument : argument_table(desc))
      if (is_weight(argument)) *given_view(written, argument) = to_c(*given_view(viewed, argument));
    *weights = written.weights;
    return {};
  });
}

// attngen_merge: the parts and tensors converted, named as the C++ merge names them.
std::int32_t merge_from_c(const attngen_partial* parts, std::int32_t count, const attngen_tensor& output,
                          const attngen_tensor& lse, const attngen_tensor& sinks, attngen_error* error) {
  return guarded(error, "merging partial results", [&]() -> status {
    if (count > 0 && parts == nullptr)
      return status(error_code::null_pointer, "parts: null with a count of " + std::to_string(count));
    std::vector<attention_partial> converted(std::size_t(std::max(count, 0)));
    for (std::int32_t n = 0; n < count; ++n) {
      const std::string prefix = "parts[" + std::to_string(n) + "].";
      attention_partial& part = converted[std::size_t(n)];
      if (status s = convert(parts[n].output, (prefix + "output").c_str(), part.output); !s) return s;
      if (status s = convert(parts[n].lse, (prefix + "lse").c_str(), part.lse); !s) return s;
    }
    tensor_view merged_output, merged_lse, merged_sinks;
    if (status s = convert(output, "output", merged_output); !s) return s;
    if (status s = convert(lse, "lse", merged_lse); !s) return s;
    if (status s = convert(sinks, "sinks", merged_sinks); !s) return s;
    return merge(converted.data(), count, merged_output, merged_lse, merged_sinks);
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

int32_t attngen_merge(const attngen_partial* parts, int32_t count, attngen_tensor output, attngen_tensor lse,
                      attngen_tensor sinks, attngen_error* error) {
  return attngen::detail::merge_from_c(parts, count, output, lse, sinks, error);
}

const char* attngen_error_code_name(int32_t code) {
  static constexpr const char* names[] = {"ok",          "null_pointer", "unexpected_tensor", "wrong_rank",
                                          "wrong_shape", "wrong_stride", "wrong_dtype",       "too_large",
                                          "wrong_device", "device_not_generated", "kernel_failed",
                                          "misaligned_pointer", "read_only_output", "communication_failed"};
  return code >= 0 && code < int32_t(std::size(names)) ? names[code] : "unknown";
}

void attngen_set_num_threads(int32_t threads) { attngen::set_num_threads(threads); }

void attngen_release_cached_memory(void) { attngen::release_cached_memory(); }

}  // extern "C"
