#pragma once
/// Which of a kernel's CPU code runs: Halide's generated dispatch asks, target by target (most
/// capable first), whether the CPU has a target's features; attngen answers for its AVX512-BF16 tier
/// (Halide's `avx512_sapphirerapids` feature, compiled for LLVM's `cooperlake` CPU: see
/// attngen/codegen/targets.hpp) from CPUID, and leaves every other feature to Halide's own check.
/// Halide 14's check models Sapphire Rapids (it also asks for AVX-VNNI, IFMA and VBMI), which would
/// keep the tier off Zen 4 and Cooper Lake. Targets asking for AVX-512 or for AVX2's set need the
/// report's word as well as Halide's, so that a pretended report (pretend_cpu) of a lesser CPU runs
/// that CPU's code. The AMX path (amx_kernel.hpp) and the vector decoding path ask the same report.

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace attngen::detail {

/// What a CPU reports that the AVX512-BF16 tier and the AMX path need.
struct cpu_report {
  bool avx2_set = false;            ///< AVX, AVX2, FMA and F16C
  bool avx512_skylake_set = false;  ///< AVX512 F, CD, BW, DQ and VL
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  /// AMX-TILE and AMX-BF16, their state enabled by the OS and granted to this process.
  bool amx_bf16 = false;
};

/// Whether a CPU reporting `cpu` runs the AVX512-BF16 tier's code (LLVM's `cooperlake` set).
constexpr bool runs_bf16_tier(const cpu_report& cpu) {
  return cpu.avx512_skylake_set && cpu.avx512_vnni && cpu.avx512_bf16;
}

/// Whether a CPU reporting `cpu` runs the AMX path's kernels (attngen/amx/flash_forward.hpp): the
/// AVX512-BF16 tier's instructions and AMX's.
constexpr bool runs_amx_path(const cpu_report& cpu) { return runs_bf16_tier(cpu) && cpu.amx_bf16; }

/// Asks Linux for the AMX tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA):
/// without it the first tile instruction is fatal. Granted once, it holds for the whole process.
inline bool granted_amx_tile_data() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
  return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
  return false;
#endif
}

/// This CPU's report, from CPUID and XGETBV (the OS must save the AVX-512 and AMX states), and for
/// AMX the process's grant of the tile data. Header-only, so that the generator's JIT tests
/// (attngen/codegen/targets.hpp) ask the same question.
inline cpu_report this_cpu() {
  auto bit = [](unsigned word, int n) { return ((word >> n) & 1u) != 0; };
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !bit(ecx, 27)) return {};  // OSXSAVE
  // Leaf 1 ECX: FMA 12, AVX 28, F16C 29.
  const bool avx_fma_f16c = bit(ecx, 12) && bit(ecx, 28) && bit(ecx, 29);
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  // XCR0: SSE and AVX state (6), then opmask, ZMM 0-15 and 16-31 state (0xe0).
  if ((xcr0 & 0x6u) != 0x6u || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return {};
  cpu_report cpu;
  // Leaf 7 EBX: AVX2 5.
  cpu.avx2_set = avx_fma_f16c && bit(ebx, 5);
  if ((xcr0 & 0xe0u) != 0xe0u) return cpu;
  // Leaf 7: F 16, DQ 17, CD 28, BW 30, VL 31 in EBX; VNNI 11 in ECX; BF16 in subleaf 1's EAX bit 5.
  cpu.avx512_skylake_set = bit(ebx, 16) && bit(ebx, 17) && bit(ebx, 28) && bit(ebx, 30) && bit(ebx, 31);
  cpu.avx512_vnni = bit(ecx, 11);
  // Leaf 7 EDX: AMX-BF16 22, AMX-TILE 24; XCR0: tile configuration 17 and data 18.
  const bool amx = bit(edx, 22) && bit(edx, 24) && bit(xcr0, 17) && bit(xcr0, 18);
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) cpu.avx512_bf16 = bit(eax, 5);
  cpu.amx_bf16 = amx && granted_amx_tile_data();
  return cpu;
}

/// Halide's check of `count` words of halide_target_feature_t bits.
using target_feature_check = int (*)(int count, const std::uint64_t* features);

/// Whether a CPU reporting `cpu` runs code built with the features `features`: with AVX, AVX2, FMA or
/// F16C only if `cpu` reports AVX2's set, with any AVX-512 feature only if it reports the Skylake set;
/// with the tier's feature only if runs_bf16_tier(cpu) and `others` accepts the rest; otherwise where
/// `others` (Halide's check of the CPU itself) accepts them.
bool runs_target_features(const cpu_report& cpu, int count, const std::uint64_t* features, target_feature_check others);

/// Makes Halide's dispatch use runs_target_features with this_cpu() (idempotent; every kernel call
/// does it before calling the kernel).
void install_cpu_dispatch();

/// The report the dispatch decides by: this_cpu()'s (asked once), or the one pretend_cpu gave.
cpu_report current_cpu();

/// Makes the dispatch decide as if the CPU reported `cpu` (a test of the dispatch on CPUs this machine
/// is not, or an app pinning a lower tier); install_cpu_dispatch then keeps it.
void pretend_cpu(const cpu_report& cpu);

}  // namespace attngen::detail
