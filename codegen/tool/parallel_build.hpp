#pragma once
// Generates a kernel's parts in parallel child processes (Halide compiles one pipeline per thread at a
// time, and processes keep the parts' compilers apart), then its wrapper.

#include <vector>

#include "attngen/codegen/compile.hpp"

namespace attngen::tool {

/// Generates every part of `request` with at most `jobs` at once, then the wrapper; returns the parts'
/// costs. Throws std::runtime_error with the first failing part's message.
std::vector<codegen::build_cost> build_kernel(const codegen::kernel_request& request, int jobs);

}  // namespace attngen::tool
