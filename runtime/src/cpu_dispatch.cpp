#include "attngen/runtime/detail/cpu_dispatch.hpp"

#include <algorithm>
#include <atomic>

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
