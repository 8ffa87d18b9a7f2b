#pragma once
/// What a mask modifier can be over a whole tile of rows and keys: the range of each of its nodes,
/// computed once per tile (block-uniform), so that tiles the mask hides from every row are skipped
/// and tiles it shows whole skip the per-key mask. The variants the emitter writes evaluate their
/// mask's graph on these types, one rule per node kind (codegen/src/tensorcore/modifier_source.cpp);
/// every rule is sound for the per-key evaluation of modifier_math.hpp: the value at any (row, key)
/// of the tile lies in the node's range, whatever the compiler contracts or rounds.

#include <cstdint>
#include <type_traits>

#include "attngen/tensorcore/modifier_math.hpp"
#include "attngen/tensorcore/variant_inputs.hpp"
#include "attngen/tensorcore/warp.hpp"

namespace attngen::tensorcore {

/// The rows and keys of a tile: one batch entry, heads and queries (the sequence's own positions)
/// and keys, each an inclusive range.
struct tile_bounds {
  int batch, first_head, last_head, first_query, last_query, first_key, last_key;
};

/// What a variant's mask does to a tile: hides every key from every row (the tile is skipped),
/// shows every key to every row (the mask is not evaluated), or neither.
enum class tile_visibility : std::uint8_t { hidden, cut, whole };

namespace ranges {

/// A boolean node over a tile: whether it can be false, whether it can be true.
struct truth {
  bool can_be_false, can_be_true;
};
/// An integer node's values; wider than int so that a range leaving int's (where the per-key
/// arithmetic wraps) is seen and taken as every int.
struct int_range {
  std::int64_t lo, hi;
};
/// A float node's values: within [lo, hi] and never NaN when `bounded`, else anything.
struct float_range {
  float lo, hi;
  bool bounded;
};

inline constexpr std::int64_t int_smallest = -2147483647LL - 1, int_largest = 2147483647LL;
/// Elements a tensor read may scan for its range (a tile's 32 or 64 keys, or 64 rows' queries, twice over).
inline constexpr std::int64_t largest_scan = 128;

ATTNGEN_TC_FN truth point(bool v) { return {!v, v}; }
ATTNGEN_TC_FN int_range point(int v) { return {v, v}; }
ATTNGEN_TC_FN float_range point(float v) { return {v, v, v == v}; }
ATTNGEN_TC_FN int_range span(int lo, int hi) { return {lo, hi}; }
ATTNGEN_TC_FN float_range anything() { return {-INFINITY, INFINITY, false}; }

ATTNGEN_TC_FN std::int64_t least(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
ATTNGEN_TC_FN std::int64_t most(std::int64_t a, std::int64_t b) { return a > b ? a : b; }
/// [lo, hi], or every int where it leaves int's range.
ATTNGEN_TC_FN int_range ints(std::int64_t lo, std::int64_t hi) {
  if (lo < int_smallest || hi > int_largest) return {int_smallest, int_largest};
  return {lo, hi};
}
ATTNGEN_TC_FN int_range hull(int_range a, int_range b) { return {least(a.lo, b.lo), most(a.hi, b.hi)}; }
ATTNGEN_TC_FN truth hull(truth a, truth b) {
  return {a.can_be_false || b.can_be_false, a.can_be_true || b.can_be_true};
}
ATTNGEN_TC_FN float_range hull(float_range a, float_range b) {
  if (!a.bounded || !b.bounded) return anything();
  return {fminf(a.lo, b.lo), fmaxf(a.hi, b.hi), true};
}
ATTNGEN_TC_FN bool finite(float_range a) { return a.bounded && a.lo > -INFINITY && a.hi < INFINITY; }

// Floats: exact bounds computed in double, widened by a relative 2^-20 of the largest magnitude in
// play (the per-key code's roundings, FMA contraction included, and the math library's few ulps lie
// far inside it), then rounded outwards.
// Doubles past float's range become infinities (converting them is undefined in C++).
inline constexpr double float_largest = 3.4028234663852886e38;
ATTNGEN_TC_FN float float_below(double x) {
  if (x > float_largest) return x == INFINITY ? INFINITY : float_largest;
  if (x < -float_largest) return -INFINITY;
  const float f = float(x);
  return double(f) > x ? nextafterf(f, -INFINITY) : f;
}
ATTNGEN_TC_FN float float_above(double x) {
  if (x > float_largest) return INFINITY;
  if (x < -float_largest) return x == -INFINITY ? -INFINITY : -float_largest;
  const float f = float(x);
  return double(f) < x ? nextafterf(f, INFINITY) : f;
}
/// [lo, hi] of finite operands' results, widened by 2^-20 of `magnitude` (finite).
ATTNGEN_TC_FN float_range widened(double lo, double hi, double magnitude) {
  const double slack = magnitude * 0x1p-20 + 0x1p-126;
  return {float_below(lo - slack), float_above(hi + slack), true};
}
ATTNGEN_TC_FN double magnitude_of(double a, double b) {
  const double x = a < 0 ? -a : a, y = b < 0 ? -b : b;
  return x > y ? x : y;
}
ATTNGEN_TC_FN float_range widened(double lo, double hi) { return widened(lo, hi, magnitude_of(lo, hi)); }
/// A monotonic function's values at its operand's ends, each widened by 2^-20 of its own magnitude;
/// an infinite end is exact (every value past it is that infinity too).
ATTNGEN_TC_FN float_range ends_widened(float lo, float hi) {
  const double low = lo, high = hi;
  const double down = low == -INFINITY || low == INFINITY ? low : low - (fabs(low) * 0x1p-20 + 0x1p-126);
  const double up = high == -INFINITY || high == INFINITY ? high : high + (fabs(high) * 0x1p-20 + 0x1p-126);
  return {float_below(down), float_above(up), true};
}

ATTNGEN_TC_FN float_range to_float(int_range a) { return {float(a.lo), float(a.hi), true}; }

// Arithmetic (typing::numbers and typing::number).
ATTNGEN_TC_FN int_range add(int_range a, int_range b) { return ints(a.lo + b.lo, a.hi + b.hi); }
ATTNGEN_TC_FN int_range sub(int_range a, int_range b) { return ints(a.lo - b.hi, a.hi - b.lo); }
ATTNGEN_TC_FN int_range neg(int_range a) { return ints(-a.hi, -a.lo); }
ATTNGEN_TC_FN int_range mul(int_range a, int_range b) {
  const std::int64_t c0 = a.lo * b.lo, c1 = a.lo * b.hi, c2 = a.hi * b.lo, c3 = a.hi * b.hi;
  return ints(least(least(c0, c1), least(c2, c3)), most(most(c0, c1), most(c2, c3)));
}
ATTNGEN_TC_FN float_range add(float_range a, float_range b) {
  if (!finite(a) || !finite(b)) return anything();
  const double lo = double(a.lo) + b.lo, hi = double(a.hi) + b.hi;
  return widened(lo, hi, magnitude_of(magnitude_of(a.lo, a.hi), magnitude_of(b.lo, b.hi)));
}
ATTNGEN_TC_FN float_range neg(float_range a) { return a.bounded ? float_range{-a.hi, -a.lo, true} : a; }
ATTNGEN_TC_FN float_range sub(float_range a, float_range b) { return add(a, neg(b)); }
ATTNGEN_TC_FN float_range mul(float_range a, float_range b) {
  if (!finite(a) || !finite(b)) return anything();
  const double c0 = double(a.lo) * b.lo, c1 = double(a.lo) * b.hi, c2 = double(a.hi) * b.lo, c3 = double(a.hi) * b.hi;
  const double lo = fmin(fmin(c0, c1), fmin(c2, c3)), hi = fmax(fmax(c0, c1), fmax(c2, c3));
  return widened(lo, hi);
}

/// Integer division rounding down (modifier::divide) of an int64, the divisor not 0.
ATTNGEN_TC_FN std::int64_t floor_divide(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
/// For a fixed dividend the quotient is monotonic on each sign of the divisor, so its extremes lie
/// at the ends of the divisor's negative and positive parts; x / 0 is 0.
ATTNGEN_TC_FN int_range div(int_range a, int_range b) {
  std::int64_t lo = 0, hi = 0;
  bool any = false;
  auto take = [&](std::int64_t divisor) {
    if (divisor < b.lo || divisor > b.hi || divisor == 0) return;
    const std::int64_t dividends[2] = {a.lo, a.hi};
    for (const std::int64_t dividend : dividends) {
      const std::int64_t q = floor_divide(dividend, divisor);
      lo = any ? least(lo, q) : q;
      hi = any ? most(hi, q) : q;
      any = true;
    }
  };
  take(b.lo);
  take(b.hi);
  take(-1);
  take(1);
  if (b.lo <= 0 && b.hi >= 0) {
    lo = any ? least(lo, 0) : 0;
    hi = any ? most(hi, 0) : 0;
  }
  return ints(lo, hi);
}
ATTNGEN_TC_FN float_range div(float_range a, float_range b) {
  if (!finite(a) || !finite(b) || (b.lo <= 0.0f && b.hi >= 0.0f)) return anything();
  const double c0 = double(a.lo) / b.lo, c1 = double(a.lo) / b.hi, c2 = double(a.hi) / b.lo, c3 = double(a.hi) / b.hi;
  return widened(fmin(fmin(c0, c1), fmin(c2, c3)), fmax(fmax(c0, c1), fmax(c2, c3)));
}
/// a - b * (a / b), x % 0 being x: within one period of a constant divisor the remainder grows with
/// the dividend; otherwise it lies between 0 and the divisor.
ATTNGEN_TC_FN int_range remainder(int_range a, int_range b) {
  if (b.lo == b.hi && b.lo != 0 && floor_divide(a.lo, b.lo) == floor_divide(a.hi, b.lo)) {
    const std::int64_t period = floor_divide(a.lo, b.lo) * b.lo;
    return {a.lo - period, a.hi - period};
  }
  bool any = false;
  int_range r{0, 0};
  if (b.hi > 0) {
    r = a.lo >= 0 ? int_range{0, least(a.hi, b.hi - 1)} : int_range{0, b.hi - 1};
    any = true;
  }
  if (b.lo < 0) {
    const int_range negative{b.lo + 1, 0};
    r = any ? hull(r, negative) : negative;
    any = true;
  }
  if (b.lo <= 0 && b.hi >= 0) r = any ? hull(r, a) : a;
  return r;
}
ATTNGEN_TC_FN float_range remainder(float_range, float_range) { return anything(); }

ATTNGEN_TC_FN int_range smaller(int_range a, int_range b) { return {least(a.lo, b.lo), least(a.hi, b.hi)}; }
ATTNGEN_TC_FN int_range larger(int_range a, int_range b) { return {most(a.lo, b.lo), most(a.hi, b.hi)}; }
ATTNGEN_TC_FN float_range smaller(float_range a, float_range b) {
  if (!a.bounded || !b.bounded) return anything();
  return {fminf(a.lo, b.lo), fminf(a.hi, b.hi), true};
}
ATTNGEN_TC_FN float_range larger(float_range a, float_range b) {
  if (!a.bounded || !b.bounded) return anything();
  return {fmaxf(a.lo, b.lo), fmaxf(a.hi, b.hi), true};
}
ATTNGEN_TC_FN int_range absolute(int_range a) {
  if (a.lo >= 0) return a;
  if (a.hi <= 0) return ints(-a.hi, -a.lo);
  return ints(0, most(-a.lo, a.hi));
}
ATTNGEN_TC_FN float_range absolute(float_range a) {
  if (!a.bounded || a.lo >= 0.0f) return a;
  if (a.hi <= 0.0f) return {-a.hi, -a.lo, true};
  return {0.0f, fmaxf(-a.lo, a.hi), true};
}

// Integers' bits (typing::integers); shift counts are clamped into 0..31 as the per-key code does.
ATTNGEN_TC_FN std::int64_t clamped_count(std::int64_t c) { return c < 0 ? 0 : c > 31 ? 31 : c; }
ATTNGEN_TC_FN int_range shift_left(int_range a, int_range count) {
  const std::int64_t low = std::int64_t(1) << clamped_count(count.lo), high = std::int64_t(1) << clamped_count(count.hi);
  return mul(a, int_range{low, high});
}
ATTNGEN_TC_FN int_range shift_right(int_range a, int_range count) {
  const std::int64_t low = clamped_count(count.lo), high = clamped_count(count.hi);
  const std::int64_t c0 = a.lo >> low, c1 = a.lo >> high, c2 = a.hi >> low, c3 = a.hi >> high;
  return {least(least(c0, c1), least(c2, c3)), most(most(c0, c1), most(c2, c3))};
}
/// The smallest 2^k - 1 at least `x` (x >= 0): every value a non-negative x's bits can make.
ATTNGEN_TC_FN std::int64_t all_ones_above(std::int64_t x) {
  std::int64_t ones = 0;
  while (ones < x) ones = ones * 2 + 1;
  return ones;
}
ATTNGEN_TC_FN bool is_point(int_range a) { return a.lo == a.hi; }
ATTNGEN_TC_FN int_range bit_and(int_range a, int_range b) {
  if (is_point(a) && is_point(b)) return point(int(a.lo) & int(b.lo));
  if (a.lo >= 0 && b.lo >= 0) return {0, least(a.hi, b.hi)};
  if (a.lo >= 0) return {0, a.hi};
  if (b.lo >= 0) return {0, b.hi};
  return {int_smallest, int_largest};
}
ATTNGEN_TC_FN int_range bit_or(int_range a, int_range b) {
  if (is_point(a) && is_point(b)) return point(int(a.lo) | int(b.lo));
  if (a.lo >= 0 && b.lo >= 0) return {most(a.lo, b.lo), all_ones_above(most(a.hi, b.hi))};
  return {int_smallest, int_largest};
}
ATTNGEN_TC_FN int_range bit_xor(int_range a, int_range b) {
  if (is_point(a) && is_point(b)) return point(int(a.lo) ^ int(b.lo));
  if (a.lo >= 0 && b.lo >= 0) return {0, all_ones_above(most(a.hi, b.hi))};
  return {int_smallest, int_largest};
}
ATTNGEN_TC_FN int_range bit_not(int_range a) { return {~a.hi, ~a.lo}; }

// Float functions (typing::float_math): the monotonic ones through their ends; the others bounded
// as far as their range goes.
template <typename F>
ATTNGEN_TC_FN float_range increasing(float_range a, F f, float domain_lo = -INFINITY, float domain_hi = INFINITY) {
  if (!a.bounded || !(a.lo >= domain_lo) || !(a.hi <= domain_hi)) return anything();
  const float lo = f(a.lo), hi = f(a.hi);
  if (lo != lo || hi != hi) return anything();
  return ends_widened(lo, hi);
}
ATTNGEN_TC_FN float_range exp(float_range a) { return increasing(a, [](float x) { return expf(x); }); }
ATTNGEN_TC_FN float_range exp2(float_range a) { return increasing(a, [](float x) { return exp2f(x); }); }
ATTNGEN_TC_FN float_range log(float_range a) { return increasing(a, [](float x) { return logf(x); }, 0.0f); }
ATTNGEN_TC_FN float_range tanh(float_range a) { return increasing(a, [](float x) { return tanhf(x); }); }
ATTNGEN_TC_FN float_range sinh(float_range a) { return increasing(a, [](float x) { return sinhf(x); }); }
ATTNGEN_TC_FN float_range sqrt(float_range a) { return increasing(a, [](float x) { return sqrtf(x); }, 0.0f); }
ATTNGEN_TC_FN float_range floor(float_range a) { return increasing(a, [](float x) { return floorf(x); }); }
ATTNGEN_TC_FN float_range ceil(float_range a) { return increasing(a, [](float x) { return ceilf(x); }); }
ATTNGEN_TC_FN float_range round(float_range a) { return increasing(a, [](float x) { return rintf(x); }); }
ATTNGEN_TC_FN float_range sigmoid(float_range a) { return increasing(a, [](float x) { return modifier::sigmoid(x); }); }
ATTNGEN_TC_FN float_range erf(float_range a) { return increasing(a, [](float x) { return erff(x); }); }
ATTNGEN_TC_FN float_range atan(float_range a) { return increasing(a, [](float x) { return atanf(x); }); }
ATTNGEN_TC_FN float_range asin(float_range a) { return increasing(a, [](float x) { return asinf(x); }, -1.0f, 1.0f); }
ATTNGEN_TC_FN float_range acos(float_range a) {
  return neg(increasing(a, [](float x) { return -acosf(x); }, -1.0f, 1.0f));
}
ATTNGEN_TC_FN float_range sin(float_range a) { return finite(a) ? float_range{-1.0f, 1.0f, true} : anything(); }
ATTNGEN_TC_FN float_range cos(float_range a) { return sin(a); }
ATTNGEN_TC_FN float_range tan(float_range) { return anything(); }
ATTNGEN_TC_FN float_range cosh(float_range) { return anything(); }
ATTNGEN_TC_FN float_range pow(float_range, float_range) { return anything(); }
ATTNGEN_TC_FN float_range atan2(float_range, float_range) { return anything(); }

// Comparisons (typing::comparison) and booleans (typing::booleans).
ATTNGEN_TC_FN truth lt(int_range a, int_range b) { return {a.hi >= b.lo, a.lo < b.hi}; }
ATTNGEN_TC_FN truth le(int_range a, int_range b) { return {a.hi > b.lo, a.lo <= b.hi}; }
ATTNGEN_TC_FN truth eq(int_range a, int_range b) {
  return {!(is_point(a) && is_point(b) && a.lo == b.lo), a.lo <= b.hi && b.lo <= a.hi};
}
ATTNGEN_TC_FN truth lt(float_range a, float_range b) {
  if (!a.bounded || !b.bounded) return {true, true};
  return {a.hi >= b.lo, a.lo < b.hi};
}
ATTNGEN_TC_FN truth le(float_range a, float_range b) {
  if (!a.bounded || !b.bounded) return {true, true};
  return {a.hi > b.lo, a.lo <= b.hi};
}
ATTNGEN_TC_FN truth eq(float_range a, float_range b) {
  if (!a.bounded || !b.bounded) return {true, true};
  return {!(a.lo == a.hi && b.lo == b.hi && a.lo == b.lo), a.lo <= b.hi && b.lo <= a.hi};
}
ATTNGEN_TC_FN truth logical_not(truth a) { return {a.can_be_true, a.can_be_false}; }
template <typename R>
ATTNGEN_TC_FN truth gt(R a, R b) { return lt(b, a); }
template <typename R>
ATTNGEN_TC_FN truth ge(R a, R b) { return le(b, a); }
template <typename R>
ATTNGEN_TC_FN truth ne(R a, R b) { return logical_not(eq(a, b)); }
ATTNGEN_TC_FN truth logical_and(truth a, truth b) {
  return {a.can_be_false || b.can_be_false, a.can_be_true && b.can_be_true};
}
ATTNGEN_TC_FN truth logical_or(truth a, truth b) {
  return {a.can_be_false && b.can_be_false, a.can_be_true || b.can_be_true};
}
template <typename R>
ATTNGEN_TC_FN R select(truth condition, R then, R otherwise) {
  if (!condition.can_be_false) return then;
  if (!condition.can_be_true) return otherwise;
  return hull(then, otherwise);
}

// Captured tensors (typing::declared): read over the whole of each index's range where it holds
// few elements, indices clamped as the per-key read clamps them; anything where it holds more.
ATTNGEN_TC_FN int_range clamped(int_range index, int extent) {
  const std::int64_t last = extent - 1;
  return {index.lo < 0 ? 0 : index.lo > last ? last : index.lo, index.hi < 0 ? 0 : index.hi > last ? last : index.hi};
}
template <typename T>
ATTNGEN_TC_FN auto unknown_value() {
  if constexpr (std::is_same_v<T, int>) return int_range{int_smallest, int_largest};
  else return anything();
}
template <typename T, int N>
ATTNGEN_TC_FN auto read_over(captured_view t, const int_range (&index)[N]) {
  int_range at[3] = {{0, 0}, {0, 0}, {0, 0}};
  std::int64_t count = 1;
  for (int d = 0; d < N; ++d) {
    at[d] = clamped(index[d], t.extents[d]);
    count *= at[d].hi - at[d].lo + 1;
  }
  if (count > largest_scan) return unknown_value<T>();
  T lo = static_cast<const T*>(t.data)[at[0].lo * t.strides[0] + at[1].lo * t.strides[1] + at[2].lo * t.strides[2]];
  T hi = lo;
  for (std::int64_t i0 = at[0].lo; i0 <= at[0].hi; ++i0)
    for (std::int64_t i1 = at[1].lo; i1 <= at[1].hi; ++i1)
      for (std::int64_t i2 = at[2].lo; i2 <= at[2].hi; ++i2) {
        const T x = static_cast<const T*>(t.data)[i0 * t.strides[0] + i1 * t.strides[1] + i2 * t.strides[2]];
        if (x != x) return unknown_value<T>();
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
  if constexpr (std::is_same_v<T, int>) return int_range{lo, hi};
  else return float_range{lo, hi, true};
}
template <typename T>
ATTNGEN_TC_FN auto read(captured_view t, int_range i0) {
  const int_range index[1] = {i0};
  return read_over<T>(t, index);
}
template <typename T>
ATTNGEN_TC_FN auto read(captured_view t, int_range i0, int_range i1) {
  const int_range index[2] = {i0, i1};
  return read_over<T>(t, index);
}
template <typename T>
ATTNGEN_TC_FN auto read(captured_view t, int_range i0, int_range i1, int_range i2) {
  const int_range index[3] = {i0, i1, i2};
  return read_over<T>(t, index);
}

/// The tile's visibility from its mask's root.
ATTNGEN_TC_FN tile_visibility visibility_of(truth mask) {
  if (!mask.can_be_true) return tile_visibility::hidden;
  return mask.can_be_false ? tile_visibility::cut : tile_visibility::whole;
}

}  // namespace ranges
}  // namespace attngen::tensorcore
