#pragma once
/// Which of a kernel's CPU targets runs: Halide's generated dispatch asks, target by target (most
/// capable first), whether the CPU has a target's features; attngen answers for its AVX512-BF16 tier
/// (Halide's `avx512_sapphirerapids` feature, compiled for LLVM's `cooperlake` CPU: see
/// attngen/codegen/targets.hpp) from CPUID, and leaves every other feature to Halide's own check.
/// Halide 14's check models Sapphire Rapids (it also asks for AVX-VNNI, IFMA and VBMI), which would
/// keep the tier off Zen 4 and Cooper Lake.

#include <cpuid.h>

#include <cstdint>

namespace attngen::detail {

/// What a CPU reports that the AVX512-BF16 tier needs.
struct cpu_report {
  bool avx512_skylake_set = false;  ///< AVX512 F, CD, BW, DQ and VL
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
};

/// Whether a CPU reporting `cpu` runs the AVX512-BF16 tier's code (LLVM's `cooperlake` set).
constexpr bool runs_bf16_tier(const cpu_report& cpu) {
  return cpu.avx512_skylake_set && cpu.avx512_vnni && cpu.avx512_bf16;
}

/// This CPU's report, from CPUID and XGETBV (the OS must save the AVX-512 state). Header-only, so
/// that the generator's JIT tests (attngen/codegen/targets.hpp) ask the same question.
inline cpu_report this_cpu() {
  auto bit = [](unsigned word, int n) { return ((word >> n) & 1u) != 0; };
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !bit(ecx, 27)) return {};  // OSXSAVE
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  // XCR0: SSE, AVX, opmask, ZMM 0-15 and 16-31 state.
  if ((xcr0 & 0xe6u) != 0xe6u || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return {};
  cpu_report cpu;
  // Leaf 7: F 16, DQ 17, CD 28, BW 30, VL 31 in EBX; VNNI 11 in ECX; BF16 in subleaf 1's EAX bit 5.
  cpu.avx512_skylake_set = bit(ebx, 16) && bit(ebx, 17) && bit(ebx, 28) && bit(ebx, 30) && bit(ebx, 31);
  cpu.avx512_vnni = bit(ecx, 11);
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) cpu.avx512_bf16 = bit(eax, 5);
  return cpu;
}

/// Halide's check of `count` words of halide_target_feature_t bits.
using target_feature_check = int (*)(int count, const std::uint64_t* features);

/// Whether a CPU reporting `cpu` runs code built with the features `features`: with the tier's
/// feature, only if runs_bf16_tier(cpu) and `others` accepts the rest.
bool runs_target_features(const cpu_report& cpu, int count, const std::uint64_t* features, target_feature_check others);

/// Makes Halide's dispatch use runs_target_features with this_cpu() (idempotent; every kernel call
/// does it before calling the kernel).
void install_cpu_dispatch();

/// Makes the dispatch decide as if the CPU reported `cpu` (a test of the dispatch on CPUs this machine
/// is not, or an app pinning a lower tier); install_cpu_dispatch then keeps it.
void pretend_cpu(const cpu_report& cpu);

}  // namespace attngen::detail
