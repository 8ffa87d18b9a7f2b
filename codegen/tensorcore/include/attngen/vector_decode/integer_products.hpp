#pragma once
/// The products of an int8 cache in 16-bit integers, for decode_task.hpp: a key row widened to words
/// meets q rounded to words, and a value row the softmax weights rounded to words, two products a
/// 32-bit lane (vpdpwssd with AVX512-VNNI, vpmaddwd and vpaddd without), where float products would
/// first convert each element (two instructions per 16) and take half the products an instruction.
///
/// Rounding: q's row to 32767 steps of its largest |element|, a chunk's weights of a row to 32767
/// steps of their largest; each moves the result by at most 2^-16 of its largest term's scale, a
/// hundredth of the cache's own rounding (half of one of 127 steps). Sums stay within 32 bits: at most
/// 256 products of 32767 x 128 in a score, 64 in an output element.

#include <cmath>
#include <cstdint>
#include <utility>

#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
#include <immintrin.h>
#endif

#include "attngen/simd/vectors.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace attngen::vector_decode {
namespace {

using namespace attngen::simd;

using i16x32 = std::int16_t __attribute__((vector_size(64)));

/// The largest magnitude a rounded word takes.
inline constexpr float word_steps = 32767.0f;

/// N (32 or 16) int8 elements from `at` as words, the rest of the 32 zero; reads N bytes.
template <int N>
inline i16x32 widen_to_words(const unsigned char* at) {
  static_assert(N == 32 || N == 16);
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  if constexpr (N == 32)
    return i16x32(_mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at))));
  else
    return i16x32(_mm512_cvtepi8_epi16(_mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)))));
#else
  i16x32 words{};
  for (int n = 0; n < N; ++n) words[n] = static_cast<std::int8_t>(at[n]);
  return words;
#endif
}

/// sum + a[2l] b[2l] + a[2l + 1] b[2l + 1] in each 32-bit lane l.
inline i32x16 add_pair_products(i32x16 sum, i16x32 a, i16x32 b) {
#if defined(ATTNGEN_VECTOR_DECODE_VNNI)
  return i32x16(_mm512_dpwssd_epi32(__m512i(sum), __m512i(a), __m512i(b)));
#elif defined(ATTNGEN_VECTOR_DECODE_AVX512)
  return sum + i32x16(_mm512_madd_epi16(__m512i(a), __m512i(b)));
#else
  for (int l = 0; l < 16; ++l) sum[l] += std::int32_t(a[2 * l]) * b[2 * l] + std::int32_t(a[2 * l + 1]) * b[2 * l + 1];
  return sum;
#endif
}

/// |x| in each lane (NaN stays NaN).
inline f32x16 magnitude(f32x16 x) { return __builtin_bit_cast(f32x16, __builtin_bit_cast(u32x16, x) & 0x7fffffffu); }

inline f32x16 float_of(i32x16 v) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  return f32x16(_mm512_cvtepi32_ps(__m512i(v)));
#else
  return __builtin_convertvector(v, f32x16);
#endif
}

/// x rounded to the nearest integer (ties to even), as 32-bit lanes; |x| <= word_steps.
inline i32x16 rounded(f32x16 x) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  return i32x16(_mm512_cvtps_epi32(__m512(x)));
#else
  i32x16 n;
  for (int l = 0; l < 16; ++l) n[l] = std::int32_t(std::nearbyint(x[l]));
  return n;
#endif
}

/// 16 lanes' low words, in order, at `to`.
inline void store_words(std::int16_t* to, i32x16 v) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), _mm512_cvtepi32_epi16(__m512i(v)));
#else
  for (int l = 0; l < 16; ++l) to[l] = std::int16_t(v[l]);
#endif
}

/// The factor that rounds values of largest magnitude `largest` to words, and the step it rounds to
/// (0 and 0 where every value is 0; NaN where `largest` is, so that a NaN reaches the result).
struct word_scale {
  float to_words, step;
};
inline word_scale word_scale_of(float largest) {
  if (largest != largest) return {0.0f, largest};
  if (largest == 0.0f) return {0.0f, 0.0f};
  return {word_steps / largest, largest / word_steps};
}

/// The pair of words at `at` (two keys' weights) in every 32-bit lane.
inline i32x16 broadcast_pair(const std::int16_t* at) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  return i32x16(_mm512_set1_epi32(load<std::int32_t>(at)));
#else
  return i32x16{} + load<std::int32_t>(at);
#endif
}

/// Two keys' rows of 32 dims as pairs of words: lane l of `first` holds dim interleaved_element(l, 0)
/// of each (key a's in the low word), of `second` dim interleaved_element(l, 1).
inline void key_pairs(i16x32 a, i16x32 b, i16x32& first, i16x32& second) {
  u32x16 low, high;
  interleave(__builtin_bit_cast(u16x32, a), __builtin_bit_cast(u16x32, b), low, high);
  first = __builtin_bit_cast(i16x32, low);
  second = __builtin_bit_cast(i16x32, high);
}

/// The 32 dims of key_pairs' lanes back in order: dims 0-15 and 16-31.
inline void dims_in_order(f32x16 first, f32x16 second, f32x16& low, f32x16& high) {
  low = __builtin_shufflevector(first, second, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  high = __builtin_shufflevector(first, second, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
}

}  // namespace
}  // namespace attngen::vector_decode

#pragma GCC diagnostic pop
