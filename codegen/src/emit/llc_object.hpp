#pragma once
// Objects compiled by LLVM 14's own llc from the IR Halide generates, for two reasons:
// - the AVX512-BF16 tier (attngen/codegen/targets.hpp): Halide 14 compiles it for LLVM's
//   `sapphirerapids` CPU, whose AVX512-FP16 instructions (vmovw, seen loading bf16 elements) AMD CPUs
//   lack; llc compiles the same IR for `cooperlake`, the AVX-512 Skylake set with VNNI and BF16;
// - code that prefetches (blocking::prefetch_keys_ahead): Halide 14 emits every prefetch as
//   `prefetchnta`, whose lines an Intel Xeon keeps out of L2; llc's are `prefetcht0`, into every level.

#include <string>

#include "Halide.h"

namespace attngen::codegen {

/// The LLVM CPU the AVX512-BF16 tier is compiled for.
inline constexpr const char* bf16_tier_llvm_cpu = "cooperlake";

/// Writes `module`'s code as an object at `object_path`, with Halide's code generation options, for
/// LLVM CPU `llvm_cpu` (empty: the CPU and features Halide chose for the module's target), its
/// prefetches as `prefetcht0`. Throws std::runtime_error when llc is missing or fails.
void compile_with_llc(const Halide::Module& module, const std::string& object_path, const std::string& llvm_cpu);

/// The llc program used: $ATTNGEN_LLC, else the one found when attngen was built; empty if neither.
std::string llc_program();

}  // namespace attngen::codegen
