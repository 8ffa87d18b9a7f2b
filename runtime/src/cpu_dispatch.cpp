#include "attngen/runtime/detail/cpu_dispatch.hpp"

#include <algorithm>
#include <atomic>
#include <initializer_list>

#include "HalideRuntime.h"

namespace attngen::detail {

namespace {

constexpr int tier_feature = halide_target_feature_avx512_sapphirerapids;
constexpr int feature_words = (halide_target_feature_end + 63) / 64;

std::atomic<bool> pretending{false};
cpu_report pretended;

int check_this_cpu(int count, const std::uint64_t* features) {
  return runs_target_features(current_cpu(), count, features, &halide_default_can_use_target_features) ? 1 : 0;
}

}  // namespace

cpu_report current_cpu() {
  static const cpu_report actual = this_cpu();
  return pretending.load() ? pretended : actual;
}

bool runs_target_features(const cpu_report& cpu, int count, const std::uint64_t* features, target_feature_check others) {
  auto asks_for_any = [&](std::initializer_list<int> wanted) {
    for (int f : wanted)
      if (f / 64 < count && (features[f / 64] >> (f % 64) & 1u) != 0) return true;
    return false;
  };
  if (!cpu.avx2_set && asks_for_any({halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_fma,
                                     halide_target_feature_f16c}))
    return false;
  if (!cpu.avx512_skylake_set &&
      asks_for_any({halide_target_feature_avx512, halide_target_feature_avx512_knl, halide_target_feature_avx512_skylake,
                    halide_target_feature_avx512_cannonlake, halide_target_feature_avx512_sapphirerapids}))
    return false;
  const int word = tier_feature / 64;
  const std::uint64_t bit = std::uint64_t(1) << (tier_feature % 64);
  if (word >= count || (features[word] & bit) == 0) return others(count, features) != 0;
  // Halide's wrapper asks on every call: the other features are copied to the stack, not the heap.
  // A request longer than this runtime's features is not one it can judge.
  std::uint64_t rest[feature_words];
  if (!runs_bf16_tier(cpu) || count > feature_words) return false;
  std::copy(features, features + count, rest);
  rest[word] &= ~bit;
  return others(count, rest) != 0;
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
