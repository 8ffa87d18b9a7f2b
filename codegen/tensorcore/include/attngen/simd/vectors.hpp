#pragma once
/// Sixteen-lane vectors for the hand-written CPU paths (the AMX tile code's softmax and packing, the
/// vector decoding path), written once with the GCC and Clang vector extensions: the translation units
/// compiled for AVX-512 (NAME_amx.cpp, the runtime's vector_decode.cpp) make them one register each,
/// the tests whatever their build targets. Where ATTNGEN_AMX_TARGET is defined (code
/// compiled for AVX-512 with BF16, as NAME_amx.cpp's target region is), the exponential and the bf16
/// packing use the instructions made for them. Everything here has internal linkage, so that code
/// compiled for AVX-512 in one translation unit is never what the linker keeps for another.

#include <cstdint>
#include <utility>

#if defined(ATTNGEN_AMX_TARGET)
#include <immintrin.h>
#endif

// The vectors pass between functions of internal linkage only, so the ABI GCC warns about is moot.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace attngen::simd {
namespace {

using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = std::int32_t __attribute__((vector_size(64)));
using u32x16 = std::uint32_t __attribute__((vector_size(64)));
using u16x16 = std::uint16_t __attribute__((vector_size(32)));

template <typename V, typename T>
inline V load(const T* from) {
  V v;
  __builtin_memcpy(&v, from, sizeof v);
  return v;
}
template <typename V, typename T>
inline void store(T* to, V v) {
  __builtin_memcpy(to, &v, sizeof v);
}
inline f32x16 splat(float x) { return f32x16{} + x; }
/// The larger of each pair, NaN where either is NaN.
inline f32x16 max_of(f32x16 a, f32x16 b) { return ((a > b) | (a != a)) ? a : b; }
inline bool any_lane(i32x16 m) {
  std::int32_t any = 0;
  for (int n = 0; n < 16; ++n) any |= m[n];
  return any != 0;
}

// Cephes' exp2f polynomial for 2^f, |f| <= 1/2 (relative error about 2e-7).
inline f32x16 exp2_polynomial(f32x16 f) {
  f32x16 p = 1.535336188319500e-4f * f + 1.339887440266574e-3f;
  p = p * f + 9.618437357674640e-3f;
  p = p * f + 5.550332471162809e-2f;
  p = p * f + 2.402264791363012e-1f;
  p = p * f + 6.931472028550421e-1f;
  return p * f + 1.0f;
}

#if defined(ATTNGEN_AMX_TARGET)
/// 2^x, 0 at -infinity, NaN at NaN: x = n + f with n the nearest integer, 2^n applied by vscalefps
/// (below 2^-160 it gives 0). 7 fewer instructions than the portable form.
inline f32x16 exp2_of(f32x16 x) {
  // vmaxps and vminps return their second operand where either is NaN.
  const __m512 clamped = _mm512_min_ps(_mm512_set1_ps(127.0f), _mm512_max_ps(_mm512_set1_ps(-160.0f), __m512(x)));
  const __m512 n = _mm512_roundscale_ps(clamped, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return f32x16(_mm512_scalef_ps(__m512(exp2_polynomial(f32x16(clamped) - f32x16(n))), n));
}

/// Pairs of bf16 (rounded to nearest even) in 32-bit lanes: `low` in the low half, `high` in the high.
inline u32x16 bf16_pairs(f32x16 low, f32x16 high) {
  const __m512i words = __m512i(_mm512_cvtne2ps_pbh(__m512(high), __m512(low)));
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                              6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return u32x16(_mm512_permutexvar_epi16(interleave, words));
}
#else
/// 2^x, 0 below 2^-126 and at -infinity, NaN at NaN: x = n + f with n the nearest integer, n added
/// to 2^f's exponent.
inline f32x16 exp2_of(f32x16 x) {
  const f32x16 clamped = x < -126.0f ? splat(-126.0f) : (x > 127.0f ? splat(127.0f) : x);
  const f32x16 shifted = clamped + 0.5f;
  i32x16 n = __builtin_convertvector(shifted, i32x16);
  n -= __builtin_convertvector(n, f32x16) > shifted ? 1 : 0;  // truncation to floor
  const f32x16 p = exp2_polynomial(clamped - __builtin_convertvector(n, f32x16));
  const i32x16 bits = __builtin_bit_cast(i32x16, p) + (n << 23);
  return x < -126.0f ? splat(0.0f) : (x != x ? x : __builtin_bit_cast(f32x16, bits));
}

/// Pairs of bf16 (rounded to nearest even) in 32-bit lanes: `low` in the low half, `high` in the high.
inline u32x16 bf16_pairs(f32x16 low, f32x16 high) {
  const u32x16 a = __builtin_bit_cast(u32x16, low), b = __builtin_bit_cast(u32x16, high);
  const u32x16 rounded_a = a + 0x7fffu + ((a >> 16) & 1u), rounded_b = b + 0x7fffu + ((b >> 16) & 1u);
  return (rounded_a >> 16) | (rounded_b & 0xffff0000u);
}
#endif

using u16x32 = std::uint16_t __attribute__((vector_size(64)));

/// Rows `low` and `high` (32 bf16 each) interleaved within each 128-bit lane, as vpunpcklwd and
/// vpunpckhwd do (GCC 12 spells other word shuffles element by element): 32-bit lane m of `first`
/// holds element interleaved_element(m, 0) of each row, `low`'s in the low half; of `second`,
/// interleaved_element(m, 1).
template <std::size_t... N>
inline void interleave(u16x32 low, u16x32 high, u32x16& first, u32x16& second, std::index_sequence<N...>) {
  const u16x32 a = __builtin_shufflevector(low, high, int(8 * (N / 8) + N % 8 / 2 + N % 2 * 32)...);
  const u16x32 b = __builtin_shufflevector(low, high, int(8 * (N / 8) + 4 + N % 8 / 2 + N % 2 * 32)...);
  first = __builtin_bit_cast(u32x16, a);
  second = __builtin_bit_cast(u32x16, b);
}
inline void interleave(u16x32 low, u16x32 high, u32x16& first, u32x16& second) {
  interleave(low, high, first, second, std::make_index_sequence<32>{});
}
constexpr int interleaved_element(int lane, int half) { return 8 * (lane / 4) + 4 * half + lane % 4; }

/// The bf16 nearest each element (ties to even), a quiet NaN at NaN.
inline u16x16 bf16_of(f32x16 x) {
  const u32x16 a = __builtin_bit_cast(u32x16, x);
  const u32x16 rounded = x != x ? u32x16{} + 0x7fc00000u : a + 0x7fffu + ((a >> 16) & 1u);
  return __builtin_convertvector(rounded >> 16, u16x16);
}

// One step of the transpose: within each 2s x 2s block of a pair of rows (i, i + s), the top-right and
// bottom-left s x s blocks trade places.
template <int S, std::size_t... C>
inline void trade_blocks(u32x16& top, u32x16& bottom, std::index_sequence<C...>) {
  const u32x16 a = top, b = bottom;
  top = __builtin_shufflevector(a, b, ((C & S) == 0 ? int(C) : int(16 + C - S))...);
  bottom = __builtin_shufflevector(a, b, ((C & S) == 0 ? int(C + S) : int(16 + C))...);
}
template <int S>
inline void trade_blocks(u32x16 (&m)[16]) {
  for (int i = 0; i < 16; ++i)
    if ((i & S) == 0) trade_blocks<S>(m[i], m[i + S], std::make_index_sequence<16>{});
}

/// m transposed in place (16 x 16 32-bit elements).
inline void transpose(u32x16 (&m)[16]) {
  trade_blocks<8>(m);
  trade_blocks<4>(m);
  trade_blocks<2>(m);
  trade_blocks<1>(m);
}

}  // namespace
}  // namespace attngen::simd

#pragma GCC diagnostic pop
