// The range rules a tile's mask is classified with (attngen/tensorcore/modifier_ranges.hpp), one per
// node kind: for operands anywhere in their ranges, the per-key operation's value (modifier_math.hpp,
// as the variants compute it) lies in the rule's range. Ranges are drawn at random, small and near
// int's and float's limits, and every point (or a dense sample of floats) is tried.
#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "attngen/tensorcore/modifier_ranges.hpp"

using namespace attngen::tensorcore;
using ranges::float_range;
using ranges::int_range;

namespace {

// Ranges of up to 40 values around 0, around small multiples of 8 and at int's ends.
int_range random_int_range(std::mt19937& random) {
  const int centres[] = {0, 0, 5, -7, 64, -64, INT_MAX - 40, INT_MIN + 40};
  const int centre = centres[random() % 8];
  const int lo = centre + int(random() % 21) - 10;
  return {lo, lo + int(random() % 20)};
}

void check_int_rule(const std::string& name, const std::function<int(int, int)>& op,
                    const std::function<int_range(int_range, int_range)>& rule) {
  std::mt19937 random(11);
  for (int trial = 0; trial < 400; ++trial) {
    const int_range a = random_int_range(random), b = random_int_range(random);
    const int_range r = rule(a, b);
    for (std::int64_t x = a.lo; x <= a.hi; ++x)
      for (std::int64_t y = b.lo; y <= b.hi; ++y) {
        const int value = op(int(x), int(y));
        INFO(name << "(" << x << ", " << y << ") = " << value << " outside [" << r.lo << ", " << r.hi << "]");
        REQUIRE((value >= r.lo && value <= r.hi));
      }
  }
}

float_range random_float_range(std::mt19937& random) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const float scales[] = {1.0f, 1e-3f, 30.0f, 1e30f};
  const float scale = scales[random() % 4];
  const float a = unit(random) * scale, b = unit(random) * scale;
  return {std::fmin(a, b), std::fmax(a, b), true};
}

// Points of a range: its ends and 30 between them.
std::vector<float> points_of(float_range a) {
  std::vector<float> points = {a.lo, a.hi};
  for (int n = 1; n < 31; ++n) points.push_back(a.lo + (a.hi - a.lo) * float(n) / 31.0f);
  return points;
}

bool contains(float_range r, float value) {
  if (!r.bounded) return true;
  return !std::isnan(value) && value >= r.lo && value <= r.hi;
}

void check_float_rule(const std::string& name, const std::function<float(float, float)>& op,
                      const std::function<float_range(float_range, float_range)>& rule) {
  std::mt19937 random(13);
  for (int trial = 0; trial < 400; ++trial) {
    const float_range a = random_float_range(random), b = random_float_range(random);
    const float_range r = rule(a, b);
    for (const float x : points_of(a))
      for (const float y : points_of(b)) {
        const float value = op(x, y);
        INFO(name << "(" << x << ", " << y << ") = " << value << " outside [" << r.lo << ", " << r.hi << "]");
        REQUIRE(contains(r, value));
      }
  }
}

}  // namespace

TEST_CASE("tile mask ranges: every integer rule holds the per-key value of every pair of its operands' points",
          "[tensorcore][modifiers]") {
  check_int_rule("add", [](int x, int y) { return int(unsigned(x) + unsigned(y)); },
                 [](int_range a, int_range b) { return ranges::add(a, b); });
  check_int_rule("sub", [](int x, int y) { return int(unsigned(x) - unsigned(y)); },
                 [](int_range a, int_range b) { return ranges::sub(a, b); });
  check_int_rule("mul", [](int x, int y) { return int(unsigned(x) * unsigned(y)); },
                 [](int_range a, int_range b) { return ranges::mul(a, b); });
  check_int_rule("div", modifier::divide, [](int_range a, int_range b) { return ranges::div(a, b); });
  check_int_rule("remainder", [](int x, int y) { return modifier::remainder(x, y); },
                 [](int_range a, int_range b) { return ranges::remainder(a, b); });
  check_int_rule("min", [](int x, int y) { return modifier::smaller(x, y); },
                 [](int_range a, int_range b) { return ranges::smaller(a, b); });
  check_int_rule("max", [](int x, int y) { return modifier::larger(x, y); },
                 [](int_range a, int_range b) { return ranges::larger(a, b); });
  check_int_rule("abs", [](int x, int) { return modifier::absolute(x); },
                 [](int_range a, int_range) { return ranges::absolute(a); });
  check_int_rule("neg", [](int x, int) { return int(0u - unsigned(x)); },
                 [](int_range a, int_range) { return ranges::neg(a); });
  check_int_rule("shift_left", modifier::shift_left, [](int_range a, int_range b) { return ranges::shift_left(a, b); });
  check_int_rule("shift_right", modifier::shift_right,
                 [](int_range a, int_range b) { return ranges::shift_right(a, b); });
  check_int_rule("bit_and", [](int x, int y) { return x & y; },
                 [](int_range a, int_range b) { return ranges::bit_and(a, b); });
  check_int_rule("bit_or", [](int x, int y) { return x | y; },
                 [](int_range a, int_range b) { return ranges::bit_or(a, b); });
  check_int_rule("bit_xor", [](int x, int y) { return x ^ y; },
                 [](int_range a, int_range b) { return ranges::bit_xor(a, b); });
  check_int_rule("bit_not", [](int x, int) { return ~x; }, [](int_range a, int_range) { return ranges::bit_not(a); });
}

TEST_CASE("tile mask ranges: every comparison of integers is true or false where its ranges say it must be",
          "[tensorcore][modifiers]") {
  std::mt19937 random(17);
  const std::function<bool(int, int)> ops[] = {std::less<int>(), std::less_equal<int>(), std::equal_to<int>(),
                                               std::not_equal_to<int>(), std::greater<int>(),
                                               std::greater_equal<int>()};
  const std::function<ranges::truth(int_range, int_range)> rules[] = {
      [](int_range a, int_range b) { return ranges::lt(a, b); },
      [](int_range a, int_range b) { return ranges::le(a, b); },
      [](int_range a, int_range b) { return ranges::eq(a, b); },
      [](int_range a, int_range b) { return ranges::ne(a, b); },
      [](int_range a, int_range b) { return ranges::gt(a, b); },
      [](int_range a, int_range b) { return ranges::ge(a, b); }};
  for (int trial = 0; trial < 400; ++trial) {
    const int_range a = random_int_range(random), b = random_int_range(random);
    for (int op = 0; op < 6; ++op) {
      bool seen_true = false, seen_false = false;
      for (std::int64_t x = a.lo; x <= a.hi; ++x)
        for (std::int64_t y = b.lo; y <= b.hi; ++y) (ops[op](int(x), int(y)) ? seen_true : seen_false) = true;
      const ranges::truth t = rules[op](a, b);
      INFO("comparison " << op << " of [" << a.lo << ", " << a.hi << "] and [" << b.lo << ", " << b.hi << "]");
      // Comparisons of two independent ranges are exact.
      CHECK(t.can_be_true == seen_true);
      CHECK(t.can_be_false == seen_false);
    }
  }
}

TEST_CASE("tile mask ranges: every float rule holds the per-key value of every pair of its operands' points",
          "[tensorcore][modifiers]") {
  check_float_rule("add", [](float x, float y) { return x + y; },
                   [](float_range a, float_range b) { return ranges::add(a, b); });
  check_float_rule("sub", [](float x, float y) { return x - y; },
                   [](float_range a, float_range b) { return ranges::sub(a, b); });
  check_float_rule("mul", [](float x, float y) { return x * y; },
                   [](float_range a, float_range b) { return ranges::mul(a, b); });
  check_float_rule("fma", [](float x, float y) { return std::fma(x, y, y); },
                   [](float_range a, float_range b) { return ranges::add(ranges::mul(a, b), b); });
  check_float_rule("div", [](float x, float y) { return x / y; },
                   [](float_range a, float_range b) { return ranges::div(a, b); });
  check_float_rule("min", [](float x, float y) { return std::fmin(x, y); },
                   [](float_range a, float_range b) { return ranges::smaller(a, b); });
  check_float_rule("abs", [](float x, float) { return std::fabs(x); },
                   [](float_range a, float_range) { return ranges::absolute(a); });
  check_float_rule("exp", [](float x, float) { return expf(x); }, [](float_range a, float_range) { return ranges::exp(a); });
  check_float_rule("log", [](float x, float) { return logf(x); }, [](float_range a, float_range) { return ranges::log(a); });
  check_float_rule("tanh", [](float x, float) { return tanhf(x); },
                   [](float_range a, float_range) { return ranges::tanh(a); });
  check_float_rule("sqrt", [](float x, float) { return sqrtf(x); },
                   [](float_range a, float_range) { return ranges::sqrt(a); });
  check_float_rule("sigmoid", [](float x, float) { return modifier::sigmoid(x); },
                   [](float_range a, float_range) { return ranges::sigmoid(a); });
  check_float_rule("acos", [](float x, float) { return acosf(x); },
                   [](float_range a, float_range) { return ranges::acos(a); });
  check_float_rule("sin", [](float x, float) { return sinf(x); }, [](float_range a, float_range) { return ranges::sin(a); });
  check_float_rule("round", [](float x, float) { return rintf(x); },
                   [](float_range a, float_range) { return ranges::round(a); });
}

TEST_CASE("tile mask ranges: a tensor read over a few indices gives the values' range, over many anything",
          "[tensorcore][modifiers]") {
  const int ids[10] = {0, 0, 1, 1, 1, 4, 4, 7, 7, 7};
  const captured_view documents{ids, {10, 1, 1}, {1, 0, 0}};
  const int_range some = ranges::read<int>(documents, int_range{2, 6});
  CHECK(some.lo == 1);
  CHECK(some.hi == 4);
  // Indices clamped into the tensor, as the per-key read clamps them.
  const int_range past = ranges::read<int>(documents, int_range{8, 40});
  CHECK(past.lo == 7);
  CHECK(past.hi == 7);
  const int_range many = ranges::read<int>(documents, int_range{-1000000, 1000000});
  CHECK(many.lo == 0);
  CHECK(many.hi == 7);
  const captured_view wide{ids, {10, 1000, 1}, {1, 0, 0}};
  const int_range too_many = ranges::read<int>(wide, int_range{0, 9}, int_range{0, 999});
  CHECK(too_many.lo == INT_MIN);
  CHECK(too_many.hi == INT_MAX);
}
