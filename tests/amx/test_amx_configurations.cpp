// The AMX path's tile code (attngen/amx/flash_forward.hpp) run with the tests' generated variants
// against the float64 reference: on emulated tiles, so the packing of q, K and V into tiles, the
// transposed scores, the online softmax a row per lane, causal block skipping, masks, padding, sinks
// and the modifiers are checked on any CPU; and on this CPU's AMX tiles where it has them. Each
// problem runs in tasks of one row group and of the most, alike to the bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "amx/amx_cases.hpp"
#include "attngen/amx/eligibility.hpp"
#include "attngen/runtime/detail/cpu_dispatch.hpp"
#include "compiled_amx_variants.hpp"
#include "support/configurations.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {
const bool registered = register_amx_cases(compiled_amx_variants, "on emulated tiles", false) &&
                        register_amx_cases(compiled_amx_hardware_variants, "on this CPU's AMX tiles", true);
}  // namespace

TEST_CASE("every configuration with tensor-core calls that the AMX path takes has an AMX runner", "[amx]") {
  int taken = 0;
  for (const compiled_tensorcore_variant& v : compiled_amx_variants) {
    INFO(v.configuration);
    const operator_configuration* c = operator_configuration_named(v.configuration);
    REQUIRE(c != nullptr);
    CHECK((v.run != nullptr) == (amx::refusal(c->desc) == nullptr));
    taken += v.run != nullptr;
  }
  CHECK(taken >= 5);
}

namespace {

constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

std::size_t at(int b, int l, int h, int x, int L, int H, int X) { return ((std::size_t(b) * L + l) * H + h) * X + x; }

// gqa_causal_bf16 (H32 KVH8 D128, causal top-left) at B2 Lq 40 Lk 40: 160 rows a kv head, 5 groups.
attention_problem causal_problem() {
  return make_random_problem(operator_configuration_named("gqa_causal_bf16")->desc, 2, 40, 40, 11);
}

// Runs `p` on every runner (emulated tiles, and this CPU's where it has AMX) and checks that output
// element (b, i, h, e) is NaN exactly when `expect_nan(b, i, h, e)`.
void check_nan_pattern(const attention_problem& p, const std::function<bool(int, int, int, int)>& expect_nan) {
  std::vector<const compiled_tensorcore_variant*> runners;
  for (const auto* list : {&compiled_amx_variants, &compiled_amx_hardware_variants})
    for (const compiled_tensorcore_variant& v : *list)
      if (v.configuration == "gqa_causal_bf16") runners.push_back(&v);
  REQUIRE(runners.size() == 2);
  if (!attngen::detail::runs_amx_path(attngen::detail::this_cpu())) runners.pop_back();
  const int H = p.desc.num_heads, D = p.desc.qk_head_dim;
  for (const compiled_tensorcore_variant* runner : runners) {
    const tensorcore_result r = runner->run(p);
    int mismatches = 0;
    for (int b = 0; b < p.batch; ++b)
      for (int i = 0; i < p.query_length; ++i)
        for (int h = 0; h < H; ++h)
          for (int e = 0; e < D; ++e) {
            const bool is_nan = std::isnan(r.output[at(b, i, h, e, p.query_length, H, D)]);
            if (is_nan != expect_nan(b, i, h, e) && mismatches++ < 5)
              UNSCOPED_INFO("output[b=" << b << ", i=" << i << ", h=" << h << ", e=" << e << "] is "
                                        << (is_nan ? "NaN" : "finite"));
          }
    CHECK(mismatches == 0);
  }
}

}  // namespace

TEST_CASE("AMX: NaN in q[b,i,h] makes exactly output row (b,i,h) NaN", "[amx][nan]") {
  attention_problem p = causal_problem();
  p.q[at(1, 23, 5, 7, p.query_length, 32, 128)] = nan_value;
  check_nan_pattern(p, [](int b, int i, int h, int) { return b == 1 && i == 23 && h == 5; });
}

TEST_CASE("AMX: NaN in k[b,j,g] reaches exactly the rows of group g that see key j (causal top-left)", "[amx][nan]") {
  attention_problem p = causal_problem();
  p.k[at(0, 17, 3, 100, p.key_length, 8, 128)] = nan_value;
  check_nan_pattern(p, [](int b, int i, int h, int) { return b == 0 && h / 4 == 3 && i >= 17; });
}

TEST_CASE("AMX: NaN in v[b,j,g,e] reaches exactly column e of the rows of group g", "[amx][nan]") {
  attention_problem p = causal_problem();
  p.v[at(1, 9, 6, 42, p.key_length, 8, 128)] = nan_value;
  // Rows that mask key 9 weigh it 0, and 0 times NaN is NaN (docs/semantics.md allows either).
  check_nan_pattern(p, [](int b, int, int h, int e) { return b == 1 && h / 4 == 6 && e == 42; });
}
