#pragma once
/// Ahead-of-time compilation of a description into what an app links: a static library holding the
/// Halide kernel (one per target, with run-time dispatch when several are given), its C header, and
/// a typed C++ wrapper (`<name>.hpp` / `<name>.cpp`) that validates arguments through the runtime.

#include <string>
#include <vector>

#include "Halide.h"
#include "attngen/attention.hpp"

namespace attngen::codegen {

struct kernel_request {
  std::string name;                    ///< C++ identifier: the wrapper struct; files are <name>.*
  std::string cpp_namespace;           ///< optional namespace of the wrapper struct (may contain ::)
  attention_desc desc;                 ///< must be valid
  std::vector<Halide::Target> targets; ///< most capable first; the last is the fallback
  std::string output_directory;
};

/// Writes <name>_halide.a, <name>_halide.h, <name>.hpp and <name>.cpp into the output directory.
/// Throws std::runtime_error (or Halide::CompileError) on failure.
void compile_kernel(const kernel_request& request);

/// Writes a static library holding the Halide runtime for `target`, shared by all kernels of an app.
void compile_runtime(const Halide::Target& target, const std::string& library_path);

}  // namespace attngen::codegen
