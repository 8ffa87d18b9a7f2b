#pragma once
// The tensor-core part of a kernel with CUDA code: NAME_tensorcore.cpp, which defines the kernel's
// attngen::detail::tensorcore_kernel record (in the wrapper's namespace) holding the fatbin nvcc
// compiled from the description's kernel (attngen/codegen/tensorcore_source.hpp), or none, with the
// reason, where the path does not take the description or no nvcc is found.

#include <string>

#include "attngen/attention.hpp"

namespace attngen::codegen {

/// nvcc as found: $ATTNGEN_NVCC, else the CUDA toolkit's when attngen was built; empty if neither.
std::string nvcc_program();

struct tensorcore_part_result {
  double seconds = 0;           ///< nvcc's wall time (0 without a kernel)
  std::size_t fatbin_bytes = 0; ///< 0 without a kernel
};

/// Writes NAME_tensorcore.cpp (and, with a kernel, NAME_tensorcore.hpp and .cu, its source, kept for
/// inspection) into `directory`; `why_none`, when given, is why there is no kernel. Throws
/// std::runtime_error when nvcc fails.
tensorcore_part_result write_tensorcore_part(const std::string& name, const std::string& cpp_namespace,
                                             const attention_desc& desc, const std::string& directory,
                                             std::string why_none);

}  // namespace attngen::codegen
