// Which of a fat kernel's CPU code runs (attngen/runtime/detail/cpu_dispatch.hpp): the AVX512-BF16
// tier only on CPUs that report AVX512-BF16, VNNI and the AVX-512 Skylake set, the AMX path
// (amx_kernel.hpp) only on those that also report AMX-BF16 granted by the OS; the fallbacks
// everywhere else. Kernels: gqa_causal_bf16 generated for the tier and baseline x86-64
// (dispatch_tier_and_baseline, which has an AMX kernel), and for baseline x86-64 alone
// (dispatch_baseline_only, which has none).
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/runtime/detail/amx_kernel.hpp"
#include "attngen/runtime/detail/cpu_dispatch.hpp"
#include "dispatch_baseline_only.hpp"
#include "dispatch_tier_and_baseline.hpp"
#include "kernels/aot_call.hpp"
#include "support/problem.hpp"

extern const attngen::detail::amx_kernel dispatch_tier_and_baseline_amx_kernel;
extern const attngen::detail::amx_kernel dispatch_baseline_only_amx_kernel;

namespace attngen::testing {
namespace {

using detail::cpu_report;

constexpr cpu_report zen3_like{.avx2_set = true};
constexpr cpu_report zen4_like{.avx2_set = true, .avx512_skylake_set = true, .avx512_vnni = true, .avx512_bf16 = true};
constexpr cpu_report skylake_server{
    .avx2_set = true, .avx512_skylake_set = true, .avx512_vnni = false, .avx512_bf16 = false};
constexpr cpu_report cascade_lake{.avx2_set = true, .avx512_skylake_set = true, .avx512_vnni = true, .avx512_bf16 = false};
constexpr cpu_report sapphire_rapids{
    .avx2_set = true, .avx512_skylake_set = true, .avx512_vnni = true, .avx512_bf16 = true, .amx_bf16 = true};

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

TEST_CASE("cpu dispatch: targets without the tier's feature get Halide's answer on a CPU reporting their sets",
          "[dispatch]") {
  const auto skylake_features = features_of({halide_target_feature_avx512_skylake, halide_target_feature_fma});
  CHECK(runs(skylake_server, skylake_features, &accept_everything));
  CHECK_FALSE(runs(zen4_like, skylake_features, &accept_nothing));
  const auto baseline_features = features_of({});
  CHECK(runs(cpu_report{}, baseline_features, &accept_everything));
  CHECK_FALSE(runs(cpu_report{}, baseline_features, &accept_nothing));
}

TEST_CASE("cpu dispatch: AVX-512 targets never run on a CPU reporting AVX2's set alone, AVX2 ones do", "[dispatch]") {
  for (const auto& avx512 : {features_of({halide_target_feature_avx512}),
                             features_of({halide_target_feature_avx512_skylake, halide_target_feature_fma}),
                             features_of({halide_target_feature_avx512_cannonlake})})
    CHECK_FALSE(runs(zen3_like, avx512, &accept_everything));
  CHECK(runs(zen3_like, features_of({halide_target_feature_avx2, halide_target_feature_fma, halide_target_feature_f16c}),
             &accept_everything));
}

TEST_CASE("cpu dispatch: AVX, AVX2, FMA and F16C targets never run on a CPU reporting none of AVX2's set",
          "[dispatch]") {
  for (int feature : {halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_fma,
                      halide_target_feature_f16c})
    CHECK_FALSE(runs(cpu_report{}, features_of({feature}), &accept_everything));
}

TEST_CASE("cpu dispatch: this CPU's report agrees with Halide's own check of the AVX2 and AVX-512 sets",
          "[dispatch]") {
  const cpu_report cpu = detail::this_cpu();
  const auto skylake_features = features_of({halide_target_feature_avx512_skylake});
  CHECK((halide_default_can_use_target_features(int(skylake_features.size()), skylake_features.data()) != 0) ==
        cpu.avx512_skylake_set);
  const auto avx2_features =
      features_of({halide_target_feature_avx2, halide_target_feature_fma, halide_target_feature_f16c});
  CHECK((halide_default_can_use_target_features(int(avx2_features.size()), avx2_features.data()) != 0) ==
        cpu.avx2_set);
}

TEST_CASE("cpu dispatch: the installed check runs the AVX512-BF16 tier exactly where this CPU's report does",
          "[dispatch]") {
  detail::install_cpu_dispatch();
  const bool tier = detail::runs_bf16_tier(detail::this_cpu());
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

TEST_CASE("cpu dispatch: a bf16 kernel on this CPU runs its bf16 code (the tier, or AMX) where it reports AVX512-BF16",
          "[dispatch]") {
  const cpu_report cpu = detail::this_cpu();
  if (!detail::runs_bf16_tier(cpu)) {
    WARN("this CPU lacks AVX512-BF16: the tier cannot run here");
    return;
  }
  // The tier and AMX round the softmax weights to bf16 where they multiply V; the baseline multiplies floats.
  CHECK(output_of<dispatch_tier_and_baseline>(problem()) != output_of<dispatch_baseline_only>(problem()));
}

// The AMX call the runtime would make for `p` on a CPU reporting `cpu`, on 2 threads.
std::optional<amx::forward_call> amx_call_for(const attention_problem& p, const cpu_report& cpu,
                                              const detail::amx_kernel& kernel = dispatch_tier_and_baseline_amx_kernel) {
  aot_call call(p);
  return detail::amx_call_of(p.desc, call.args(), kernel, cpu, 2);
}

TEST_CASE("cpu dispatch: a bf16 kernel with the AVX512-BF16 tier has an AMX kernel, one without the tier none, saying why",
          "[dispatch][amx]") {
  CHECK(dispatch_tier_and_baseline_amx_kernel.worker != nullptr);
  CHECK(dispatch_tier_and_baseline_amx_kernel.scratch_bytes == amx::scratch_for(128).bytes);
  CHECK(dispatch_baseline_only_amx_kernel.worker == nullptr);
  CHECK_THAT(dispatch_baseline_only_amx_kernel.why_none, Catch::Contains("AVX512-BF16 tier"));
}

TEST_CASE("cpu dispatch: the AMX path runs on a CPU reporting AMX-BF16 and the AVX512-BF16 tier's set", "[dispatch][amx]") {
  const std::optional<amx::forward_call> call = amx_call_for(problem(), sapphire_rapids);
  REQUIRE(call.has_value());
  // 100 queries of 4 heads per kv head: 400 rows, one task of the most groups (512 rows) per kv head,
  // which gives 2 threads 4 tasks each.
  CHECK(call->task_groups == amx::max_task_groups);
  CHECK(call->tasks == 8);
  CHECK(call->params.query_length == 100);
  CHECK(call->params.key_length == 300);
}

TEST_CASE("cpu dispatch: the AMX path never runs on a CPU without AMX-BF16 or without the tier's set", "[dispatch][amx]") {
  for (const cpu_report& cpu : {zen4_like, skylake_server, cascade_lake, cpu_report{.amx_bf16 = true}})
    CHECK_FALSE(amx_call_for(problem(), cpu).has_value());
}

TEST_CASE("cpu dispatch: calls of fewer than 8 rows a kv head (decoding) run the Halide code, not AMX", "[dispatch][amx]") {
  static_assert(detail::amx_min_rows == 8);
  // One query of 4 heads per kv head: 4 rows; two queries: 8.
  const attention_problem decode = make_random_problem(dispatch_baseline_only::description, 2, 1, 300, 7);
  CHECK_FALSE(amx_call_for(decode, sapphire_rapids).has_value());
  const attention_problem two_queries = make_random_problem(dispatch_baseline_only::description, 2, 2, 300, 7);
  CHECK(amx_call_for(two_queries, sapphire_rapids).has_value());
}

TEST_CASE("cpu dispatch: a kernel without an AMX kernel never takes the AMX path", "[dispatch][amx]") {
  CHECK_FALSE(amx_call_for(problem(), sapphire_rapids, dispatch_baseline_only_amx_kernel).has_value());
}

TEST_CASE("cpu dispatch: a bf16 kernel on a CPU pretending to lack AMX runs its AVX512-BF16 tier, not the AMX path",
          "[dispatch][amx]") {
  if (!detail::runs_amx_path(detail::this_cpu())) {
    WARN("this CPU has no AMX-BF16 (or the OS does not grant it): the AMX path cannot run here");
    return;
  }
  const std::vector<float> with_amx = output_of<dispatch_tier_and_baseline>(problem());
  detail::pretend_cpu(zen4_like);
  const std::vector<float> tier = output_of<dispatch_tier_and_baseline>(problem());
  // The two round and sum in different orders: the same values to bf16's precision, not the same bits.
  CHECK(tier != with_amx);
  CHECK(tier != output_of<dispatch_baseline_only>(problem()));
}

}  // namespace
}  // namespace attngen::testing
