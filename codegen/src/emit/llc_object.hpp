#pragma once
// Objects of the AVX512-BF16 tier (attngen/codegen/targets.hpp), compiled by LLVM 14's own llc from
// the IR Halide generates: Halide 14 compiles that tier for LLVM's `sapphirerapids` CPU, whose
// AVX512-FP16 instructions (vmovw, seen loading bf16 elements) AMD CPUs lack; llc compiles the same
// IR for `cooperlake`, the AVX-512 Skylake set with VNNI and BF16.

#include <string>

#include "Halide.h"

namespace attngen::codegen {

/// The LLVM CPU the tier is compiled for.
inline constexpr const char* bf16_tier_llvm_cpu = "cooperlake";

/// Writes `module`'s code as an object at `object_path`, with Halide's code generation options but
/// for bf16_tier_llvm_cpu. Throws std::runtime_error when llc is missing or fails.
void compile_with_llc(const Halide::Module& module, const std::string& object_path);

/// The llc program used: $ATTNGEN_LLC, else the one found when attngen was built; empty if neither.
std::string llc_program();

}  // namespace attngen::codegen
