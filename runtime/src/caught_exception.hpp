#pragma once
// What the runtime's entry points (the kernel calls, the C API) return for an exception they caught:
// none may leave them (attngen/runtime/status.hpp).

#include <exception>
#include <new>
#include <string>

#include "attngen/runtime/status.hpp"

namespace attngen::detail {

// Called in a catch block: the exception being handled as error_code::kernel_failed, its message
// naming what failed while `doing` what, e.g. "out of memory while running the attention kernel"
// for std::bad_alloc. Never throws: when even the message cannot be allocated, the status has none.
inline status status_of_caught_exception(const char* doing) noexcept {
  try {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      return status(error_code::kernel_failed, std::string("out of memory while ") + doing);
    } catch (const std::exception& e) {
      return status(error_code::kernel_failed, std::string("internal error while ") + doing + ": " + e.what());
    } catch (...) {
      return status(error_code::kernel_failed, std::string("unexpected internal error while ") + doing);
    }
  } catch (...) {
    return status(error_code::kernel_failed, std::string());
  }
}

}  // namespace attngen::detail
