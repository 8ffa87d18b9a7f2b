#pragma once
/// Whether the test program's GPU API (CUDA or OpenCL, fixed per program) has a device here.

#include <string>

#include "attngen/runtime/tensor.hpp"
#include "support/configurations.hpp"

namespace attngen::testing {

/// The API the program tests.
device_kind tested_device();
/// The same, as the registry of configurations names it.
backend tested_backend();

/// Empty when a device of that API is present; otherwise what is missing, for the skip message.
std::string gpu_unavailable_reason();

}  // namespace attngen::testing
