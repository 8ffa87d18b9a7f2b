#pragma once
/// Ahead-of-time compilation of a description into what an app links: one static library of CPU code
/// (`<name>_halide_cpu.a`: every kernel variant, a module's projections or an operator's visibility
/// table, each one function per
/// target with run-time dispatch when several are given) and one per GPU API, their functions' C
/// headers, and a typed C++ wrapper (`<name>.hpp` / `<name>.cpp`, and `<name>.h` for C callers) that
/// validates arguments through the runtime and picks the variant for the call's shape.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/module.hpp"
#include "attngen/runtime/detail/variants.hpp"

namespace attngen::codegen {

/// Outputs that show what a kernel's code is, for people.
enum class inspection {
  stmt_html,   ///< Halide's lowered statement of the general variant as HTML, per CPU target
               ///< (<name>_general-<target>.stmt.html)
  assembly,    ///< the general variant's assembly, per CPU target (<name>_general-<target>.s)
  gpu_source,  ///< a GPU target's device code: PTX (<name>_cuda.ptx) or OpenCL C (<name>_opencl.cl)
};

struct kernel_request {
  std::string name;                    ///< C++ identifier: the wrapper struct; files are <name>.*
  std::string cpp_namespace;           ///< optional namespace of the wrapper struct (may contain ::)
  std::variant<attention_desc, mha_desc> desc;  ///< the operator or the module; must be valid
  /// CPU targets most capable first (the last is the fallback), and GPU targets (CUDA, OpenCL; at
  /// most one of each) in any order.
  std::vector<Halide::Target> targets;
  /// Of the CPU targets the kernel takes, only the first this machine's CPU runs: for builds that run
  /// only where they are built, such as a benchmark.
  bool only_this_cpu = false;
  std::string output_directory;
  /// Written by the parts that compile their code anyway: the general variant and the GPU parts.
  std::vector<inspection> inspections;
};

/// What one part of a kernel cost for one target: generation time and object code size.
struct build_cost {
  std::string target;  ///< the Halide target string given
  std::string part;    ///< a kernel variant (general, short_keys, ...), a module's shared part
                       ///< (projection, out_projection, weights) or a GPU API (cuda, opencl)
  double seconds = 0;  ///< processor time of lowering and code generation (with several CPU targets,
                       ///< each target's share)
  std::uint64_t object_bytes = 0;
};

/// A kernel is generated in parts, each writing its own files, so parts may run in parallel: one per
/// kernel variant (for a module, of its attention), one per part a module's variants share
/// (codegen::cpu_module_parts), and an operator's visibility table where its mask modifier reads
/// captures (visibility_table.hpp), each writing <name>_halide_P.a and .h holding every CPU target;
/// and one per GPU API (<name>_halide_A.a and .h). Throws std::runtime_error on an invalid request.
int kernel_part_count(const kernel_request& request);
/// Generates part `part` (0 <= part < kernel_part_count) and returns its costs per target. Throws
/// std::runtime_error (or a Halide error) on failure. A module's projection parts are compiled with
/// LLVM's SLP vectorizer held back only in a process that has compiled nothing before them (as
/// `attngen generate` runs each part).
std::vector<build_cost> compile_kernel_part(const kernel_request& request, int part);
/// After every part: merges the CPU parts' libraries into <name>_halide_cpu.a (removing them), and
/// writes the wrapper <name>.hpp and <name>.cpp, and the C API header <name>.h.
void finish_kernel(const kernel_request& request);

/// Every part, one after the other, then the wrapper, in this process (so a module's projections
/// keep the SLP vectorizer: see compile_kernel_part).
std::vector<build_cost> compile_kernel(const kernel_request& request);

/// The files `request.inspections` make compile_kernel_part write, in the output directory.
std::vector<std::string> inspection_paths(const kernel_request& request);

/// The generated Halide function (and header stem) of one part of a kernel: a variant, a module's
/// shared part, or a GPU API ("cuda", "opencl").
std::string halide_function_name(const std::string& kernel_name, const std::string& part);

/// The part of an operator's backward pass on GPU API `api`: its function is in that API's library
/// and header, beside the forward's.
std::string gpu_backward_part_name(const std::string& api);

/// Writes a static library holding the Halide runtime for `target`, shared by all kernels of an app.
void compile_runtime(const Halide::Target& target, const std::string& library_path);

}  // namespace attngen::codegen
