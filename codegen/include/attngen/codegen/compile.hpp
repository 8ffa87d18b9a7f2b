#pragma once
/// Ahead-of-time compilation of a description into what an app links: a static library per kernel
/// variant (each holding one kernel per target, with run-time dispatch when several are given), their
/// C headers, and a typed C++ wrapper (`<name>.hpp` / `<name>.cpp`) that validates arguments through
/// the runtime and picks the variant for the call's shape.

#include <string>
#include <variant>
#include <vector>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/module.hpp"
#include "attngen/runtime/variants.hpp"

namespace attngen::codegen {

struct kernel_request {
  std::string name;                    ///< C++ identifier: the wrapper struct; files are <name>.*
  std::string cpp_namespace;           ///< optional namespace of the wrapper struct (may contain ::)
  std::variant<attention_desc, mha_desc> desc;  ///< the operator or the module; must be valid
  /// CPU targets most capable first (the last is the fallback), and GPU targets (CUDA, OpenCL; at
  /// most one of each) in any order.
  std::vector<Halide::Target> targets;
  std::string output_directory;
};

/// Writes, for each kernel variant V, <name>_halide_V.a and <name>_halide_V.h, for each GPU API A
/// <name>_halide_A.a and .h, and the wrapper <name>.hpp and <name>.cpp, into the output directory.
/// Throws std::runtime_error (or a Halide error) on failure.
void compile_kernel(const kernel_request& request);

/// The generated Halide function (and file stem) of one variant of a kernel.
std::string halide_function_name(const std::string& kernel_name, kernel_variant variant);

/// The generated Halide function (and file stem) of a kernel's code for a GPU API ("cuda", "opencl").
std::string halide_gpu_function_name(const std::string& kernel_name, const std::string& api);

/// Writes a static library holding the Halide runtime for `target`, shared by all kernels of an app.
void compile_runtime(const Halide::Target& target, const std::string& library_path);

}  // namespace attngen::codegen
