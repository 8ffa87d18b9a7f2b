#pragma once
/// Used by generated kernel wrappers only: the C API's entry points (attngen/c_api.h) over the C++
/// ones. The C structs are converted slot by slot, checking the enumerations' values; the C++ call
/// validates the rest, so C callers get the same errors, copied into their attngen_error.

#include <cstddef>
#include <cstdint>

#include "attngen/c_api.h"
#include "attngen/runtime/attention_backward_call.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "attngen/runtime/module_call.hpp"

namespace attngen::detail {

using attention_run = status (*)(const attention_args&);
using module_run = status (*)(const mha_args&);
using backward_run = status (*)(const attention_backward_args&);
using module_backward_run = status (*)(const mha_backward_args&);

/// `run(args)`, or the error that converting `args` found; the code returned and copied to `error`.
/// The tensors are converted in the order of the schema of `desc` (attngen/arguments.hpp,
/// attngen/module_arguments.hpp) and named as it names them.
/// No exception leaves these: one thrown is error_code::kernel_failed ("out of memory while ...").
std::int32_t run_from_c(const attention_desc& desc, const attngen_attention_args* args, attngen_error* error,
                        attention_run run) noexcept;
std::int32_t run_from_c(const mha_desc& desc, const attngen_mha_args* args, attngen_error* error,
                        module_run run) noexcept;
std::int32_t run_from_c(const attention_desc& desc, const attngen_attention_backward_args* args, attngen_error* error,
                        backward_run run) noexcept;
std::int32_t run_from_c(const mha_desc& desc, const attngen_mha_backward_args* args, attngen_error* error,
                        module_backward_run run) noexcept;

/// weights_from_state_dict for C: `weights` is written only on success.
std::int32_t weights_from_state_dict_from_c(const mha_desc& desc, const attngen_state_dict_tensor* tensors,
                                            std::size_t count, attngen_mha_weights* weights,
                                            attngen_error* error) noexcept;

}  // namespace attngen::detail
