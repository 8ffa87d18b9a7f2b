#pragma once
/// Numerical tolerances of every kernel against the float64 reference: the one place they are stated.
///
/// Metric: maximum absolute error. Test inputs are uniform in [-1, 1), so every output is a convex
/// combination of V rows with |out| <= 1 and absolute error is the meaningful scale.
/// Bound: the element type's output rounding (half an ulp at 1), plus float32 accumulation error that
/// grows with the reduction lengths: the head_dim-term dot product and the Lk-term softmax sums,
/// allowed 8 ulps of float32 times sqrt(length) each (random-sign rounding errors grow like sqrt(n)).
/// Inputs of f16/bf16 problems are already exact in their type, so only the output is rounded there.

#include <cmath>

#include "attngen/attention.hpp"
#include "attngen/dtype.hpp"
#include "attngen/vector_decode/call.hpp"

namespace attngen::testing {

/// Unit roundoff (half the gap between 1 and the next value) of a floating element type.
constexpr double unit_roundoff(dtype t) {
  switch (t) {
    case dtype::f32: return 0x1p-24;
    case dtype::f16: return 0x1p-11;
    case dtype::bf16: return 0x1p-8;
    case dtype::u8:
    case dtype::i32:
    case dtype::i8: break;
  }
  return 0.5;
}

/// Roundings of the element type in an output: the output's own, and for bf16 the softmax weights'
/// where they multiply V as bf16 dot products (the AVX512-BF16 tier, as FlashAttention and oneDNN do),
/// which moves the output by at most one unit roundoff of its scale.
constexpr int output_roundings(dtype t) { return t == dtype::bf16 ? 2 : 1; }

/// Largest absolute error allowed in an output element; `merges`: partial results over parts of the
/// keys merged that many times (attngen::merge, rounding its result once each: one more rounding of
/// the element type per merge, the parts' errors carried through a convex combination).
inline double output_tolerance(dtype t, int head_dim, int key_length, int merges = 0) {
  const double accumulation = 8 * 2 * unit_roundoff(dtype::f32) * (std::sqrt(double(head_dim)) + std::sqrt(double(key_length)));
  return (output_roundings(t) + merges) * unit_roundoff(t) + accumulation;
}

/// The code that computed a result: the CPU or Halide GPU code, exact on its inputs but for an int8
/// cache's products in words (rounds_products_to_words), or the tensor-core path, which rounds a cache
/// of another element type than its own (int8 dequantised, f32, the other 16-bit type) to its type as
/// it stages it.
enum class computed_by { exact_code, tensor_cores };

/// Half a step of the words the vector decoding path rounds an int8 cache's products to
/// (attngen/vector_decode/integer_products.hpp): q's row and a chunk's weights of a row, each to
/// 32767 steps of its largest.
inline constexpr double word_roundoff = 0x1p-16;

/// Whether the CPU code may compute `d` with an int8 cache's products in words: the vector decoding
/// path takes it (on CPUs with AVX-512) and its cache is int8.
inline bool rounds_products_to_words(const attention_desc& d) {
  return d.effective_kv_element() == dtype::i8 && vector_decode::refusal(d) == nullptr;
}

/// What words move a score by: q's roundings, |k| <= 1, random signs over head_dim products (three
/// standard deviations of uniform roundings and keys are under sqrt(head_dim) of them), times the scale.
inline double word_score_error(const attention_desc& d) {
  return word_roundoff * d.effective_scale() * std::sqrt(double(d.qk_head_dim));
}

/// What words move an output element by: each weight by up to half a step of its chunk's largest (at
/// most the row's sum), |v| <= 1, random signs over a chunk's keys as for the scores; and the scores'
/// error, which moves the output by up to twice it.
inline double word_output_error(const attention_desc& d) {
  return word_roundoff * std::sqrt(double(vector_decode::chunk_keys)) + 2 * word_score_error(d);
}

/// Whether `d`'s results computed by `by` come from inputs rounded to the tensor cores' type: an f32
/// description on the tensor cores (f32_on_tensor_cores) always, its CPU code, exact in f32, being
/// held to the same bound; a 16-bit description's on the tensor cores where its cache is of
/// another type.
inline bool reads_rounded_inputs(const attention_desc& d, computed_by by) {
  if (d.tensor_core_type() == dtype::f32) return false;
  return d.element_type == dtype::f32 ||
         (by == computed_by::tensor_cores && d.effective_kv_element() != d.tensor_core_type());
}

/// output_tolerance for an output of description `d`: of its element type, or, where it reads
/// rounded inputs, three roundings of the tensor cores' type: V's and the scores' (through q and k)
/// as the kernel reads them, and the weights' as they multiply V.
inline double output_tolerance_of(const attention_desc& d, int key_length, int merges = 0,
                                  computed_by by = computed_by::exact_code) {
  if (reads_rounded_inputs(d, by))
    return output_tolerance(d.tensor_core_type(), d.qk_head_dim, key_length, merges) +
           (3 - output_roundings(d.tensor_core_type())) * unit_roundoff(d.tensor_core_type());
  const double words = by == computed_by::exact_code && rounds_products_to_words(d) ? word_output_error(d) : 0.0;
  return output_tolerance(d.element_type, d.qk_head_dim, key_length, merges) + words;
}

/// Largest absolute error allowed in a log-sum-exp element of magnitude |reference|; `merges` as for
/// output_tolerance, each a float32 rounding.
inline double lse_tolerance(int head_dim, int key_length, double reference, int merges = 0) {
  return (8 * 2 * (std::sqrt(double(head_dim)) + std::sqrt(double(key_length))) + merges) * unit_roundoff(dtype::f32) *
         (1.0 + std::fabs(reference));
}

/// lse_tolerance for description `d`; where it reads rounded inputs it adds the error of its scores,
/// whose q and k are rounded to the tensor cores' type: each of the head_dim products (|q k| <= 1)
/// moves by two roundings, random signs, allowed 4 times sqrt(head_dim), times the scale.
inline double lse_tolerance_of(const attention_desc& d, int key_length, double reference, int merges = 0,
                               computed_by by = computed_by::exact_code) {
  const double exact = lse_tolerance(d.qk_head_dim, key_length, reference, merges);
  if (!reads_rounded_inputs(d, by))
    return exact + (by == computed_by::exact_code && rounds_products_to_words(d) ? word_score_error(d) : 0.0);
  return exact + 4 * 2 * unit_roundoff(d.tensor_core_type()) * std::sqrt(double(d.qk_head_dim)) * d.effective_scale();
}

/// Largest absolute error allowed in an element of a gradient (dq, dk, dv, d_sinks), as a multiple of
/// max(1, largest |reference| of that gradient): the element type's rounding plus float32
/// accumulation over the dot products (head_dim and v_head_dim terms), the recomputed weights (the
/// forward's key_length sums, through the saved log-sum-exp) and the gradient's own sum over
/// `reduction_length` terms (keys for dq, a group's rows for dk and dv).
inline double gradient_tolerance(dtype t, int head_dim, int v_head_dim, int key_length, int reduction_length) {
  const double accumulation = 8 * 2 * unit_roundoff(dtype::f32) *
                              (std::sqrt(double(head_dim)) + std::sqrt(double(v_head_dim)) +
                               std::sqrt(double(key_length)) + std::sqrt(double(reduction_length)));
  return 2 * unit_roundoff(t) + accumulation;
}

/// Largest absolute error of an output computed from int8 keys and values against the same attention
/// on their values before quantisation (|q|, |k|, |v| <= 1, a scale per row of max |x| / 127): each
/// value moves by at most half a step, 1/254 of its row's largest, and so the output by at most that;
/// each score by at most scale x head_dim / 254, which moves each weight by a factor within
/// exp(+-2 x that) and the output by up to that factor less 1.
inline double int8_quantisation_bound(int head_dim, double scale) {
  const double half_step = 1.0 / 254.0;
  const double score_shift = scale * head_dim * half_step;
  return half_step + (std::exp(2.0 * score_shift) - 1.0);
}

/// Largest absolute error allowed in a module output or attention weight, as a multiple of
/// max(1, largest |reference| of that tensor). Weights and inputs are exact in the element type, so
/// the error is the output's rounding plus float32 accumulation over the input projection (the
/// widest input), q.k, the softmax sums and the output projection.
inline double module_tolerance(dtype t, int widest_input, int head_dim, int key_length, int embed) {
  const double accumulation = 8 * 2 * unit_roundoff(dtype::f32) *
                              (std::sqrt(double(widest_input)) + std::sqrt(double(head_dim)) +
                               std::sqrt(double(key_length)) + std::sqrt(double(embed)));
  return unit_roundoff(t) + accumulation;
}

}  // namespace attngen::testing
