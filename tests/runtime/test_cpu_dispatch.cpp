// Which of a fat kernel's CPU targets runs (attngen/runtime/detail/cpu_dispatch.hpp): the AVX512-BF16
// tier only on CPUs that report AVX512-BF16, VNNI and the AVX-512 Skylake set; its fallbacks
// everywhere else. Kernels: gqa_causal_bf16 generated for the tier and baseline x86-64
// (dispatch_tier_and_baseline), and for baseline x86-64 alone (dispatch_baseline_only).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/runtime/detail/cpu_dispatch.hpp"
#include "dispatch_baseline_only.hpp"
#include "dispatch_tier_and_baseline.hpp"
#include "kernels/aot_call.hpp"
#include "support/problem.hpp"

namespace attngen::testing {
namespace {

using detail::cpu_report;

constexpr cpu_report zen4_like{.avx512_skylake_set = true, .avx512_vnni = true, .avx512_bf16 = true};
constexpr cpu_report skylake_server{.avx512_skylake_set = true, .avx512_vnni = false, .avx512_bf16 = false};
constexpr cpu_report cascade_lake{.avx512_skylake_set = true, .avx512_vnni = true, .avx512_bf16 = false};

// Halide's feature words with the given features set.
std::vector<std::uint64_t> features_of(std::initializer_list<int> features) {
  std::vector<std::uint64_t> words((halide_target_feature_end + 63) / 64, 0);
  for (int f : features) words[f / 64] |= std::uint64_t(1) << (f % 64);
  return words;
}

int accept_everything(int, const std::uint64_t*) { return 1; }
int accept_nothing(int, const std::uint64_t*) { return 0; }

// What Halide's own check was asked, by the last call of record_request.
std::vector<std::uint64_t> last_request;
int record_request(int count, const std::uint64_t* features) {
  last_request.assign(features, features + count);
  return 1;
}

const std::vector<std::uint64_t> tier_features =
    features_of({halide_target_feature_avx512, halide_target_feature_avx512_sapphirerapids, halide_target_feature_fma,
                 halide_target_feature_f16c});

bool runs(const cpu_report& cpu, const std::vector<std::uint64_t>& features, detail::target_feature_check others) {
  return detail::runs_target_features(cpu, int(features.size()), features.data(), others);
}

TEST_CASE("cpu dispatch: the AVX512-BF16 tier runs on a CPU reporting AVX512-BF16, VNNI and the Skylake set",
          "[dispatch]") {
  CHECK(runs(zen4_like, tier_features, &accept_everything));
}

TEST_CASE("cpu dispatch: the AVX512-BF16 tier never runs on a CPU without AVX512-BF16", "[dispatch]") {
  CHECK_FALSE(runs(skylake_server, tier_features, &accept_everything));
  CHECK_FALSE(runs(cascade_lake, tier_features, &accept_everything));
  CHECK_FALSE(runs(cpu_report{}, tier_features, &accept_everything));
}

TEST_CASE("cpu dispatch: the tier's other features are left to Halide's check, without the tier's bit",
          "[dispatch]") {
  CHECK_FALSE(runs(zen4_like, tier_features, &accept_nothing));
  REQUIRE(runs(zen4_like, tier_features, &record_request));
  CHECK(last_request == features_of({halide_target_feature_avx512, halide_target_feature_fma, halide_target_feature_f16c}));
}

TEST_CASE("cpu dispatch: targets without the tier's feature get Halide's answer unchanged", "[dispatch]") {
  const auto skylake_features = features_of({halide_target_feature_avx512_skylake, halide_target_feature_fma});
  CHECK(runs(cpu_report{}, skylake_features, &accept_everything));
  CHECK_FALSE(runs(zen4_like, skylake_features, &accept_nothing));
}

TEST_CASE("cpu dispatch: this CPU's report agrees with its Halide target check of the AVX-512 set", "[dispatch]") {
  detail::install_cpu_dispatch();
  const cpu_report cpu = detail::this_cpu();
  const auto skylake_features = features_of({halide_target_feature_avx512_skylake});
  CHECK((halide_can_use_target_features(int(skylake_features.size()), skylake_features.data()) != 0) ==
        cpu.avx512_skylake_set);
  const bool tier = detail::runs_bf16_tier(cpu);
  CHECK((halide_can_use_target_features(int(tier_features.size()), tier_features.data()) != 0) == tier);
}

// Output of `run` on the problem, bit for bit.
template <typename Kernel>
std::vector<float> output_of(const attention_problem& p) {
  aot_call call(p);
  const status s = Kernel::run(call.args());
  INFO(s.message());
  REQUIRE(s.ok());
  return call.output();
}

const attention_problem& problem() {
  static const attention_problem p = make_random_problem(dispatch_baseline_only::description, 1, 100, 300, 7);
  return p;
}

TEST_CASE("cpu dispatch: a bf16 kernel on a CPU pretending to lack AVX512-BF16 runs its baseline code, bit for bit",
          "[dispatch]") {
  detail::pretend_cpu(skylake_server);
  CHECK(output_of<dispatch_tier_and_baseline>(problem()) == output_of<dispatch_baseline_only>(problem()));
}

TEST_CASE("cpu dispatch: a bf16 kernel on this CPU runs the AVX512-BF16 tier where it reports AVX512-BF16",
          "[dispatch]") {
  const cpu_report cpu = detail::this_cpu();
  if (!detail::runs_bf16_tier(cpu)) {
    WARN("this CPU lacks AVX512-BF16: the tier cannot run here");
    return;
  }
  // The tier rounds the softmax weights to bf16 where they multiply V; the baseline multiplies floats.
  CHECK(output_of<dispatch_tier_and_baseline>(problem()) != output_of<dispatch_baseline_only>(problem()));
}

}  // namespace
}  // namespace attngen::testing
