// A NaN in an input reaches exactly the outputs that depend on it and nothing else.
// "Depends on" follows the masks: a key that is masked out for a row (causal, key padding) does not
// reach that row through K. (Through V it can: weight 0 times NaN is NaN, as in PyTorch's math path;
// README states this.)
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "codegen/jit_runner.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

std::size_t at(int b, int l, int h, int x, int L, int H, int X) {
  return ((std::size_t(b) * L + l) * H + h) * X + x;
}

// Checks that output element (b, i, h, e) is NaN exactly when `expect_nan(b, i, h, e)`.
void check_nan_pattern(const attention_problem& p, const jit_result& r,
                       const std::function<bool(int, int, int, int)>& expect_nan) {
  const int H = p.desc.num_heads, Dv = p.desc.effective_v_head_dim();
  int mismatches = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.query_length; ++i)
      for (int h = 0; h < H; ++h)
        for (int e = 0; e < Dv; ++e) {
          const bool is_nan = std::isnan(r.output[at(b, i, h, e, p.query_length, H, Dv)]);
          if (is_nan != expect_nan(b, i, h, e)) {
            if (mismatches++ < 5)
              UNSCOPED_INFO("output[b=" << b << ", i=" << i << ", h=" << h << ", e=" << e << "] is "
                                        << (is_nan ? "NaN" : "finite"));
          }
        }
  CHECK(mismatches == 0);
}

const auto gqa = attention().heads(4).kv_heads(2).head_dim(64);

}  // namespace

TEST_CASE("NaN in q[b,i,h] makes exactly output row (b,i,h) NaN (causal GQA, LSE)", "[jit][nan]") {
  const auto desc = gqa.causal(top_left).return_lse();
  jit_kernel kernel(desc);
  auto p = make_random_problem(desc, 2, 17, 17, 11);
  p.q[at(1, 5, 3, 10, 17, 4, 64)] = nan_value;
  const auto r = kernel.run(p);
  check_nan_pattern(p, r, [](int b, int i, int h, int) { return b == 1 && i == 5 && h == 3; });
  for (std::size_t n = 0; n < r.lse.size(); ++n) CHECK(std::isnan(r.lse[n]) == (n == (1 * 4 + 3) * 17 + 5));
}

TEST_CASE("NaN in k[b,j,g] reaches exactly the rows of group g that see key j (causal top-left)", "[jit][nan]") {
  const auto desc = gqa.causal(top_left);
  jit_kernel kernel(desc);
  auto p = make_random_problem(desc, 2, 113, 113, 12);
  p.k[at(1, 70, 1, 0, 113, 2, 64)] = nan_value;
  const auto r = kernel.run(p);
  check_nan_pattern(p, r, [](int b, int i, int h, int) { return b == 1 && i >= 70 && h / 2 == 1; });
}

TEST_CASE("NaN in v[b,j,g,e] reaches exactly column e of the rows of group g (no mask)", "[jit][nan]") {
  jit_kernel kernel(gqa);
  auto p = make_random_problem(gqa, 2, 17, 113, 13);
  p.v[at(0, 4, 0, 7, 113, 2, 64)] = nan_value;
  const auto r = kernel.run(p);
  check_nan_pattern(p, r, [](int b, int, int h, int e) { return b == 0 && h / 2 == 0 && e == 7; });
}

TEST_CASE("NaN in k at a padded key reaches no row (key padding, true means ignore)", "[jit][nan]") {
  const auto desc = gqa.key_padding_mask(true_means_ignore);
  jit_kernel kernel(desc);
  auto p = make_random_problem(desc, 2, 17, 113, 14);
  for (int j = 0; j < 113; ++j) p.key_padding[j] = j >= 100;  // batch 0: keys 100.. are padding
  p.k[at(0, 105, 1, 3, 113, 2, 64)] = nan_value;
  const auto r = kernel.run(p);
  check_nan_pattern(p, r, [](int, int, int, int) { return false; });
}

TEST_CASE("NaN in the additive (Lq, Lk) mask at (i, j) reaches exactly row i of every batch and head",
          "[jit][nan]") {
  const auto desc = gqa.additive_mask(mask_shape::lq_lk);
  jit_kernel kernel(desc);
  auto p = make_random_problem(desc, 2, 17, 113, 15);
  for (auto& x : p.mask) x = std::isinf(x) ? 0.0f : x;  // no fully masked row hides the NaN
  p.mask[3 * 113 + 5] = nan_value;
  const auto r = kernel.run(p);
  check_nan_pattern(p, r, [](int, int i, int, int) { return i == 3; });
}
