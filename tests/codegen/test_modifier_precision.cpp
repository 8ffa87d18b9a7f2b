// The modifier language's pointwise nodes, lowered to Halide for this CPU as the kernels lower them
// (vectorized), against the float64 interpreter: float math within the bound docs/modifiers.md
// states per node, in units in the last place of the float result (results below the smallest normal
// float may be flushed to zero); integer nodes exact.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "Halide.h"
#include "attngen/codegen/modifiers.hpp"
#include "attngen/codegen/targets.hpp"
#include "reference/reference_modifiers.hpp"

using namespace attngen;
using namespace attngen::codegen;
using namespace attngen::mod;
using attngen::testing::attention_problem;
using attngen::testing::evaluate_modifier;

namespace {

constexpr int points = 20001;

// A float node's second operand, one value per point (the point's key).
constexpr auto second = tensor<capture_type::f32>("second", dim::key_length);

// The distance in representable floats between two floats (0 for equal ones, both zeros included);
// a result below the smallest normal float may be flushed to zero.
std::int64_t ulps_between(float a, float b) {
  if (std::abs(b) < std::numeric_limits<float>::min() && std::abs(a) < std::numeric_limits<float>::min()) return 0;
  auto ordered = [](float x) {
    std::int32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits < 0 ? std::int64_t(std::numeric_limits<std::int32_t>::min()) - bits : std::int64_t(bits);
  };
  return std::abs(ordered(a) - ordered(b));
}

std::vector<float> evenly_spaced(float low, float high) {
  std::vector<float> values(points);
  for (int n = 0; n < points; ++n) values[n] = low + (high - low) * float(n) / float(points - 1);
  return values;
}

attention_problem problem_for(const attention_desc& desc, const std::vector<float>& second_values) {
  attention_problem p;
  p.desc = desc;
  p.key_length = int(second_values.size());
  if (desc.captures.tensor_count > 0) p.captures = {second_values};
  return p;
}

// The score modifier of `desc` at score = first[n] and key n (reading second[n]), through Halide.
std::vector<float> lowered_scores(const attention_desc& desc, const std::vector<float>& first,
                                  const std::vector<float>& second_values) {
  const int n = int(first.size());
  capture_params params = capture_params::declare(desc.captures);
  Halide::ImageParam first_param(Halide::Float(32), 1, "first");
  Halide::Var x("x");
  Halide::Func f("modifier");
  f(x) = lower_modifier(desc.score_modifier, desc.captures, params,
                        {first_param(x), Halide::Expr(0), Halide::Expr(0), Halide::Expr(0), x, Halide::Expr(1),
                         Halide::Expr(n)});
  f.vectorize(x, 8, Halide::TailStrategy::GuardWithIf);
  std::vector<float> first_copy = first, second_copy = second_values;
  first_param.set(Halide::Buffer<float>(first_copy.data(), n));
  if (!params.tensors.empty()) params.tensors[0].set(Halide::Buffer<float>(second_copy.data(), n));
  Halide::Buffer<float> out = f.realize({n}, running_cpu_target());
  return {out.begin(), out.end()};
}

struct float_node_case {
  const char* node;
  attention_desc desc;       ///< score_mod: the node on score (and on second(kv))
  float low, high;           ///< the score's range
  float second_low = 0.0f, second_high = 0.0f;
  std::int64_t bound_ulps;   ///< docs/modifiers.md's bound
  /// The bound counts ulps of the score (the first operand), not of the result: float % loses the
  /// score's low bits to a - b * floor(a / b), however small the remainder.
  bool in_operand_ulps = false;
};

// |got - exact| in units in the last place of `operand`.
std::int64_t ulps_of_operand(float got, double exact, float operand) {
  const float magnitude = std::abs(operand);
  const double ulp = double(std::nextafter(magnitude, std::numeric_limits<float>::infinity())) - magnitude;
  return std::int64_t(std::ceil(std::abs(double(got) - exact) / ulp));
}

const auto on_score = attention().heads(1).head_dim(1);
const auto with_second = on_score.capture(second);

}  // namespace

TEST_CASE("float math nodes lowered for the CPU keep within their stated bounds of float64", "[codegen][modifiers][math]") {
  const float_node_case cases[] = {
      {"exp", on_score.score_mod(exp(score)), -87.0f, 88.0f, 0, 0, 6},
      {"exp2", on_score.score_mod(exp2(score)), -125.0f, 127.0f, 0, 0, 3},
      {"log", on_score.score_mod(log(score)), 1e-30f, 1e30f, 0, 0, 1},
      {"tanh", on_score.score_mod(tanh(score)), -10.0f, 10.0f, 0, 0, 2},
      {"sin", on_score.score_mod(sin(score)), -100.0f, 100.0f, 0, 0, 1},
      {"cos", on_score.score_mod(cos(score)), -100.0f, 100.0f, 0, 0, 1},
      {"tan", on_score.score_mod(tan(score)), -1.5f, 1.5f, 0, 0, 1},
      {"asin", on_score.score_mod(asin(score)), -1.0f, 1.0f, 0, 0, 1},
      {"acos", on_score.score_mod(acos(score)), -1.0f, 1.0f, 0, 0, 1},
      {"atan", on_score.score_mod(atan(score)), -1000.0f, 1000.0f, 0, 0, 1},
      {"sinh", on_score.score_mod(sinh(score)), -80.0f, 80.0f, 0, 0, 1},
      {"cosh", on_score.score_mod(cosh(score)), -80.0f, 80.0f, 0, 0, 1},
      {"sqrt", on_score.score_mod(sqrt(score)), 0.0f, 1e6f, 0, 0, 0},
      {"floor", on_score.score_mod(floor(score)), -1000.0f, 1000.0f, 0, 0, 0},
      {"ceil", on_score.score_mod(ceil(score)), -1000.0f, 1000.0f, 0, 0, 0},
      {"round", on_score.score_mod(round(score)), -1000.0f, 1000.0f, 0, 0, 0},
      {"sigmoid", on_score.score_mod(sigmoid(score)), -100.0f, 100.0f, 0, 0, 3},
      {"erf", on_score.score_mod(erf(score)), -5.0f, 5.0f, 0, 0, 8},
      {"pow", with_second.score_mod(pow(score, second(kv))), 1e-3f, 100.0f, -10.0f, 10.0f, 96},
      {"pow of a negative base to whole powers", on_score.score_mod(pow(score, to_float(kv % 11 - 5))), -100.0f,
       -1e-3f, 0, 0, 96},
      {"atan2", with_second.score_mod(atan2(score, second(kv))), -100.0f, 100.0f, 100.0f, -100.0f, 1},
      {"float %", with_second.score_mod(score % second(kv)), -100.0f, 100.0f, 0.25f, 7.0f, 1, true},
  };
  for (const float_node_case& c : cases) {
    const std::vector<float> first = evenly_spaced(c.low, c.high);
    const std::vector<float> second_values = evenly_spaced(c.second_low, c.second_high);
    const attention_problem p = problem_for(c.desc, second_values);
    const std::vector<float> lowered = lowered_scores(c.desc, first, second_values);
    std::int64_t worst = 0;
    float worst_at = 0.0f;
    for (int n = 0; n < points; ++n) {
      const double exact = evaluate_modifier(c.desc.score_modifier, p, {first[n], 0, 0, 0, n});
      const std::int64_t ulps = c.in_operand_ulps ? ulps_of_operand(lowered[n], exact, first[n])
                                                  : ulps_between(lowered[n], float(exact));
      if (ulps > worst) {
        worst = ulps;
        worst_at = first[n];
      }
    }
    INFO(c.node << ": " << worst << " ulps at " << worst_at << " (bound " << c.bound_ulps << ")");
    CHECK(worst <= c.bound_ulps);
  }
}

namespace {

// An integer node's values at (q, kv) for every pair of `left` x `right`, through Halide, as floats
// (to_float of the node: every value here is within 2^24, exact).
std::vector<float> lowered_integers(const attention_desc& desc, const std::vector<std::int32_t>& left,
                                    const std::vector<std::int32_t>& right) {
  const int n = int(left.size());
  Halide::ImageParam left_param(Halide::Int(32), 1, "left"), right_param(Halide::Int(32), 1, "right");
  Halide::Var x("x");
  Halide::Func f("modifier");
  f(x) = lower_modifier(desc.score_modifier, desc.captures, capture_params::declare(desc.captures),
                        {Halide::Expr(0.0f), Halide::Expr(0), Halide::Expr(0), left_param(x), right_param(x),
                         Halide::Expr(1), Halide::Expr(n)});
  f.vectorize(x, 8, Halide::TailStrategy::GuardWithIf);
  std::vector<std::int32_t> left_copy = left, right_copy = right;
  left_param.set(Halide::Buffer<std::int32_t>(left_copy.data(), n));
  right_param.set(Halide::Buffer<std::int32_t>(right_copy.data(), n));
  Halide::Buffer<float> out = f.realize({n}, running_cpu_target());
  return {out.begin(), out.end()};
}

}  // namespace

TEST_CASE("integer %, bit operations and shifts lowered for the CPU equal float64's, negative operands, zero divisors "
          "and shift counts past 31 included",
          "[codegen][modifiers][math]") {
  std::vector<std::int32_t> left, right;
  for (int a = -70; a <= 70; ++a)
    for (int b = -9; b <= 40; ++b) {
      left.push_back(a * 997);
      right.push_back(b);
    }
  const struct {
    const char* node;
    attention_desc desc;
  } cases[] = {
      {"%", on_score.score_mod(to_float(q % kv))},
      {"/", on_score.score_mod(to_float(q / kv))},
      {"&", on_score.score_mod(to_float(q & kv))},
      {"|", on_score.score_mod(to_float(q | kv))},
      {"^", on_score.score_mod(to_float(q ^ kv))},
      {"~", on_score.score_mod(to_float(~q + kv))},
      {"<< (values within 2^24)", on_score.score_mod(to_float((q % 64) << (kv % 19)))},
      {">>", on_score.score_mod(to_float(q >> kv))},
  };
  for (const auto& c : cases) {
    const attention_problem p = problem_for(c.desc, {});
    const std::vector<float> lowered = lowered_integers(c.desc, left, right);
    int mismatches = 0;
    std::string first_mismatch;
    for (std::size_t n = 0; n < left.size(); ++n) {
      const double exact = evaluate_modifier(c.desc.score_modifier, p, {0.0, 0, 0, left[n], right[n]});
      if (double(lowered[n]) != exact && mismatches++ == 0)
        first_mismatch = std::to_string(left[n]) + ", " + std::to_string(right[n]) + ": " +
                         std::to_string(lowered[n]) + " instead of " + std::to_string(exact);
    }
    INFO(c.node << ": " << mismatches << " mismatches, the first at " << first_mismatch);
    CHECK(mismatches == 0);
  }
}
