#pragma once
/// Which of a kernel's CPU targets runs: Halide's generated dispatch asks, target by target (most
/// capable first), whether the CPU has a target's features; attngen answers for its AVX512-BF16 tier
/// (Halide's `avx512_sapphirerapids` feature, compiled for LLVM's `cooperlake` CPU: see
/// attngen/codegen/targets.hpp) from CPUID, and leaves every other feature to Halide's own check.
/// Halide 14's check models Sapphire Rapids (it also asks for AVX-VNNI, IFMA and VBMI), which would
/// keep the tier off Zen 4 and Cooper Lake.

#include <cstdint>

namespace attngen::detail {

/// What a CPU reports that the AVX512-BF16 tier needs.
struct cpu_report {
  bool avx512_skylake_set = false;  ///< AVX512 F, CD, BW, DQ and VL
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
};

/// This CPU's report, from CPUID (and XGETBV: the OS saves the AVX-512 state).
cpu_report this_cpu();

/// Halide's check of `count` words of halide_target_feature_t bits.
using target_feature_check = int (*)(int count, const std::uint64_t* features);

/// Whether a CPU reporting `cpu` runs code built with the features `features`: with the tier's
/// feature, only if `cpu` has the AVX-512 Skylake set, VNNI and BF16, and `others` accepts the rest.
bool runs_target_features(const cpu_report& cpu, int count, const std::uint64_t* features, target_feature_check others);

/// Makes Halide's dispatch use runs_target_features with this_cpu() (idempotent; every kernel call
/// does it before calling the kernel).
void install_cpu_dispatch();

/// Makes the dispatch decide as if the CPU reported `cpu` (a test of the dispatch on CPUs this machine
/// is not, or an app pinning a lower tier); install_cpu_dispatch then keeps it.
void pretend_cpu(const cpu_report& cpu);

}  // namespace attngen::detail
