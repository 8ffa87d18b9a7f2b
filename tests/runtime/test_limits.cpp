// Inputs at the edges of what a kernel can compute: sizes whose indexing would overflow 32 bits,
// huge, infinite and denormal values. GQA 32/8 D128 top-left causal, f32.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "aot_gqa_causal.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

constexpr int H = 32, KVH = 8, D = 128, L = 17;

std::size_t q_at(int i, int h, int x) { return (std::size_t(i) * H + h) * D + x; }
std::size_t k_at(int j, int g, int x) { return (std::size_t(j) * KVH + g) * D + x; }

attention_problem small_problem() { return make_random_problem(aot_gqa_causal::description, 1, L, L, 21); }

std::vector<float> run(const attention_problem& p) {
  aot_call call(p);
  const status s = aot_gqa_causal::run(call.args());
  INFO(s.message());
  REQUIRE(s.ok());
  return call.output();
}

// The kernel's output on `p` is finite everywhere and within tolerance of float64.
void check_finite_and_as_float64(const attention_problem& p) {
  const auto output = run(p);
  const auto c = compare_with_reference(p, reference_attention(p), output, {});
  INFO(c.first_failure);
  CHECK(c.ok);
  for (float x : output) CHECK(std::isfinite(x));
}

}  // namespace

TEST_CASE("a tensor spanning more than 2^31 elements is refused before running, not wrapped around",
          "[runtime][limits]") {
  const auto problem = small_problem();
  aot_call call(problem);
  attention_args args = call.args();
  // 2^31 / (32 x 128) + 1 queries: every extent fits 32 bits, the span does not. The batch stride
  // (batch 1: never used) may be anything.
  const std::int64_t queries = (std::int64_t(1) << 31) / (H * D) + 1;
  args.q.shape[1] = args.output.shape[1] = queries;
  args.q.strides[0] = args.output.strides[0] = queries * H * D;
  const status s = aot_gqa_causal::run(args);
  CHECK(s.code() == error_code::too_large);
  CHECK(s.message() == "q: spans more than 2^31 elements; the kernel indexes with 32 bits");
}

TEST_CASE("an extent of 2^31 is refused before running", "[runtime][limits]") {
  const auto problem = small_problem();
  aot_call call(problem);
  attention_args args = call.args();
  args.k.shape[1] = args.v.shape[1] = std::int64_t(1) << 31;
  const status s = aot_gqa_causal::run(args);
  CHECK(s.code() == error_code::too_large);
  CHECK(s.message() == "k: dimension 1 does not fit 32-bit indexing");
}

TEST_CASE("q and k values of 1e30 (scores near 1e31) give finite outputs equal to the float64 reference",
          "[runtime][limits]") {
  auto problem = small_problem();
  // Query 5 of head 0 and key 9 of group 3 (heads 12-15) are huge; they never meet (other groups), so
  // every score stays finite, and the rows they touch are nearly one-hot.
  for (int x = 0; x < D; ++x) {
    problem.q[q_at(5, 0, x)] *= 1e30f;
    problem.k[k_at(9, 3, x)] *= -1e30f;
  }
  check_finite_and_as_float64(problem);
}

TEST_CASE("an infinite score makes exactly its row NaN, as PyTorch's math path does", "[runtime][limits]") {
  const auto clean = small_problem();
  auto problem = clean;
  // q[5, head 0, 0] = +inf against a positive k[2, group 0, 0]: score +inf, and softmax's
  // exp(inf - inf) is NaN in that row, as in PyTorch's math path. Other rows never read it.
  problem.q[q_at(5, 0, 0)] = std::numeric_limits<float>::infinity();
  problem.k[k_at(2, 0, 0)] = 0.5f;
  auto reference_problem = clean;
  reference_problem.k[k_at(2, 0, 0)] = 0.5f;
  const auto output = run(problem), expected = run(reference_problem);
  for (int i = 0; i < L; ++i)
    for (int h = 0; h < H; ++h)
      for (int e = 0; e < D; ++e) {
        const std::size_t at = q_at(i, h, e);
        if (i == 5 && h == 0) {
          CHECK(std::isnan(output[at]));
        } else if (!(output[at] == expected[at])) {
          FAIL_CHECK("row " << i << " head " << h << " changed: " << output[at] << " vs " << expected[at]);
        }
      }
}

TEST_CASE("a -inf score weighs its key zero and leaves the rest of the row as float64 computes it",
          "[runtime][limits]") {
  auto problem = small_problem();
  // k[2, group 0, 0] = -inf against positive q[., heads 0-3, 0]: key 2 scores -inf in every row of
  // group 0 that sees it, and gets weight 0 there; the other keys share the row as usual.
  problem.k[k_at(2, 0, 0)] = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < L; ++i)
    for (int h = 0; h < H / KVH; ++h) problem.q[q_at(i, h, 0)] = std::fabs(problem.q[q_at(i, h, 0)]) + 0.125f;
  check_finite_and_as_float64(problem);
}

TEST_CASE("denormal values are computed, not flushed to zero", "[runtime][limits]") {
  auto problem = small_problem();
  for (float& x : problem.v) x *= 1e-39f;  // every output below FLT_MIN (1.2e-38): denormal
  const auto output = run(problem);
  const auto reference = reference_attention(problem);
  double worst = 0, largest = 0;
  for (std::size_t n = 0; n < output.size(); ++n) {
    worst = std::max(worst, std::fabs(output[n] - reference.output[n]));
    largest = std::max(largest, std::fabs(double(output[n])));
  }
  CHECK(largest > 1e-41);
  CHECK(worst <= 1e-43);  // about 70 denormal ulps (1.4e-45 each), from 17 keys' rounding
}
