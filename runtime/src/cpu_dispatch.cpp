#include "attngen/runtime/detail/cpu_dispatch.hpp"

#include <cpuid.h>

#include <atomic>
#include <vector>

#include "HalideRuntime.h"

namespace attngen::detail {

namespace {

constexpr int tier_feature = halide_target_feature_avx512_sapphirerapids;

bool has_bit(unsigned word, int bit) { return (word >> bit) & 1u; }

// Whether the OS saves the ZMM and opmask state (XCR0 bits 1, 2, 5, 6, 7).
bool os_saves_avx512_state() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !has_bit(ecx, 27)) return false;  // OSXSAVE
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return (xcr0_low & 0xe6u) == 0xe6u;
}

std::atomic<bool> pretending{false};
cpu_report pretended;

int check_this_cpu(int count, const std::uint64_t* features) {
  static const cpu_report actual = this_cpu();
  return runs_target_features(pretending.load() ? pretended : actual, count, features,
                              &halide_default_can_use_target_features)
             ? 1
             : 0;
}

}  // namespace

cpu_report this_cpu() {
  cpu_report cpu;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!os_saves_avx512_state() || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return cpu;
  // Leaf 7: F 16, DQ 17, CD 28, BW 30, VL 31 in EBX; VNNI 11 in ECX; BF16 in subleaf 1's EAX bit 5.
  cpu.avx512_skylake_set =
      has_bit(ebx, 16) && has_bit(ebx, 17) && has_bit(ebx, 28) && has_bit(ebx, 30) && has_bit(ebx, 31);
  cpu.avx512_vnni = has_bit(ecx, 11);
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) cpu.avx512_bf16 = has_bit(eax, 5);
  return cpu;
}

bool runs_target_features(const cpu_report& cpu, int count, const std::uint64_t* features, target_feature_check others) {
  const int word = tier_feature / 64;
  const std::uint64_t bit = std::uint64_t(1) << (tier_feature % 64);
  if (word >= count || (features[word] & bit) == 0) return others(count, features) != 0;
  if (!(cpu.avx512_skylake_set && cpu.avx512_vnni && cpu.avx512_bf16)) return false;
  std::vector<std::uint64_t> rest(features, features + count);
  rest[word] &= ~bit;
  return others(count, rest.data()) != 0;
}

void install_cpu_dispatch() {
  static const bool installed = (halide_set_custom_can_use_target_features(&check_this_cpu), true);
  (void)installed;
}

void pretend_cpu(const cpu_report& cpu) {
  pretended = cpu;
  pretending.store(true);
}

}  // namespace attngen::detail
