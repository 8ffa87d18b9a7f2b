#pragma once
/// The error model of the whole public API: every call returns an `attngen::status`.
///
/// A status is ok, or carries a code and a message that names the argument, what was expected and
/// what was given, e.g. `k: expected 8 kv heads, got 4`. Nothing aborts, and kernel calls (a
/// generated kernel's `run`, and the C API's functions that return an error code) throw nothing:
/// errors raised inside a kernel by the Halide runtime are captured into the status of that call,
/// and running out of host memory during a call is error_code::kernel_failed with a message saying
/// so ("out of memory while running the attention kernel"). The other functions (validate,
/// weights_from_state_dict, from_dlpack, device_tensor) throw nothing but std::bad_alloc, when the host is out of
/// memory. When a status is not ok, no output was written. The C API (attngen/c_api.h) reports the
/// same codes, with the same values, and the same messages.

#include <string>
#include <utility>

namespace attngen {

enum class error_code {
  ok = 0,
  null_pointer,     ///< a required tensor with elements has no data pointer
  unexpected_tensor,///< a tensor was given that this kernel's description does not take
  wrong_rank,       ///< a tensor has the wrong number of dimensions
  wrong_shape,      ///< an extent disagrees with the description or with another tensor
  wrong_stride,     ///< innermost stride not 1, a stride that is not positive, or an output
                    ///< whose strides give two of its elements one address
  wrong_dtype,      ///< element type differs from the description's
  too_large,        ///< an extent or stride does not fit the kernel's 32-bit indexing
  wrong_device,     ///< tensors of one call are on different devices
  device_not_generated, ///< the call's device is one the kernel has no code for
  kernel_failed,    ///< the kernel itself reported an error (message from the Halide runtime), or
                    ///< the GPU's driver did (not found, no device, out of memory), or the host
                    ///< ran out of memory during the call
  misaligned_pointer, ///< a host or CUDA data pointer is not a multiple of its element's size
  read_only_output, ///< an output is a view of const memory (made from a const pointer)
  communication_failed, ///< a context-parallel call's communication failed, or its ranks disagreed
                        ///< (attngen/ring/ring_attention.hpp); every rank returns it
};

class [[nodiscard]] status {
 public:
  /// An ok status.
  status() = default;
  status(error_code code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == error_code::ok; }
  explicit operator bool() const { return ok(); }
  error_code code() const { return code_; }
  /// Empty when ok.
  const std::string& message() const { return message_; }

 private:
  error_code code_ = error_code::ok;
  std::string message_;
};

}  // namespace attngen
