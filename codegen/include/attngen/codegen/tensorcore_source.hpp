#pragma once
/// The tensor-core path's source for a description (codegen/tensorcore: FlashAttention-2's tile
/// code over mma.sync): the description's variant, a C++ header both nvcc and a host compiler read,
/// and the CUDA kernel that runs the tile code with it.

#include <string>

#include "attngen/attention.hpp"

namespace attngen::codegen {

/// Why the tensor-core path does not take `desc`, or empty when it does. Calls of descriptions it
/// does not take run the Halide GPU code.
std::string tensorcore_refusal(const attention_desc& desc);

/// struct `struct_name`, the tile code's Variant for `desc` (its causality, masks and modifiers over
/// attngen::tensorcore::variant_inputs, and the compile-time shape: element type, head dim, warps):
/// what the tensor-core header holds, and the AMX path's kernel (attngen/amx/flash_forward.hpp) too.
/// Needs attngen/tensorcore/flash_forward.hpp and modifier_math.hpp before it.
std::string tensorcore_variant_struct(const attention_desc& desc, const std::string& struct_name);

/// `<name>_tensorcore.hpp`: struct `<name>_tensorcore_variant` (the tile code's Variant: the
/// description's causality, masks and modifiers over attngen::tensorcore::variant_inputs) with the
/// kernel's compile-time shape (element type, head dim, warps). Throws std::invalid_argument when
/// tensorcore_refusal(desc) is not empty.
std::string tensorcore_variant_header(const attention_desc& desc, const std::string& name);

/// `<name>_tensorcore.cu`: the kernel `<name>_tensorcore_forward` (extern "C"), for nvcc.
std::string tensorcore_kernel_source(const attention_desc& desc, const std::string& name);

/// How the kernel of a description the path takes is launched.
struct tensorcore_shape {
  int block_rows, threads;
  unsigned shared_bytes;
};
tensorcore_shape tensorcore_kernel_shape(const attention_desc& desc);

}  // namespace attngen::codegen
