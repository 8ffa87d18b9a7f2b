#pragma once
/// The modifier language's operations that C++ spells differently from its semantics, for the
/// variants the emitter writes (codegen/src/tensorcore/modifier_source.cpp): the same results as the
/// Halide lowering (codegen/src/operator/modifiers.cpp) gives.

#include <cstdint>

#include "attngen/tensorcore/variant_inputs.hpp"
#include "attngen/tensorcore/warp.hpp"

namespace attngen::tensorcore::modifier {

/// Integer division rounding down; x / 0 is 0, and x / -1 wraps as -x does.
ATTNGEN_TC_FN int divide(int a, int b) {
  if (b == 0) return 0;
  if (b == -1) return int(0u - unsigned(a));
  const int q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
/// The remainder of `divide`, a - b * (a / b), without its overflow near int's ends; x % 0 is x.
ATTNGEN_TC_FN int remainder(int a, int b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  const int r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
ATTNGEN_TC_FN float remainder(float a, float b) { return a - b * floorf(a / b); }
ATTNGEN_TC_FN int absolute(int a) { return a > -a ? a : -a; }
ATTNGEN_TC_FN float absolute(float a) { return fabsf(a); }
ATTNGEN_TC_FN int smaller(int a, int b) { return a < b ? a : b; }
ATTNGEN_TC_FN float smaller(float a, float b) { return fminf(a, b); }
ATTNGEN_TC_FN int larger(int a, int b) { return a > b ? a : b; }
ATTNGEN_TC_FN float larger(float a, float b) { return fmaxf(a, b); }
/// Shift counts clamped into 0..31.
ATTNGEN_TC_FN int shift_left(int a, int count) { return int(std::uint32_t(a) << smaller(larger(count, 0), 31)); }
ATTNGEN_TC_FN int shift_right(int a, int count) { return a >> smaller(larger(count, 0), 31); }
/// 1 / (1 + e^-x) without overflow.
ATTNGEN_TC_FN float sigmoid(float x) {
  const float e = expf(-fabsf(x));
  return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

/// Element (i0[, i1[, i2]]) of a captured tensor, each index clamped into its extent.
template <typename T>
ATTNGEN_TC_FN T read(captured_view t, int i0) {
  return static_cast<const T*>(t.data)[smaller(larger(i0, 0), t.extents[0] - 1) * t.strides[0]];
}
template <typename T>
ATTNGEN_TC_FN T read(captured_view t, int i0, int i1) {
  return static_cast<const T*>(t.data)[smaller(larger(i0, 0), t.extents[0] - 1) * t.strides[0] +
                                       smaller(larger(i1, 0), t.extents[1] - 1) * t.strides[1]];
}
template <typename T>
ATTNGEN_TC_FN T read(captured_view t, int i0, int i1, int i2) {
  return static_cast<const T*>(t.data)[smaller(larger(i0, 0), t.extents[0] - 1) * t.strides[0] +
                                       smaller(larger(i1, 0), t.extents[1] - 1) * t.strides[1] +
                                       smaller(larger(i2, 0), t.extents[2] - 1) * t.strides[2]];
}

}  // namespace attngen::tensorcore::modifier
