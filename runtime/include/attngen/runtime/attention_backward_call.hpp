#pragma once
/// The arguments of an attention kernel's backward pass (a description with .with_backward()), and
/// their validation.
///
/// Shape contract (outermost first; attngen/arguments.hpp's backward_argument_table states it as data,
/// each generated header in full): q, k, v, sinks, mask, key_padding, captures and scalars exactly as
/// the forward call took them (attngen/runtime/attention_call.hpp), then
///   output       (B, Lq, H, Dv)     the forward's output
///   lse          (B, H, Lq) float32 the forward's log-sum-exp
///   d_output     (B, Lq, H, Dv)     the loss's gradient of the output
///   dq           (B, Lq, H, D)      written: the loss's gradient of q
///   dk, dv       (B, Lk, KVH, D), (B, Lk, KVH, Dv)   written: of k and v, summed over each kv head's
///                                  query heads
///   d_sinks      (H) float32        written, with attention sinks: of the sinks' logits
///   d_captures[n] float32, captured tensor n's shape: written where it is a float tensor the score
///                modifier reads (a learnable bias table, slopes); the rest left empty
///   d_scalars    (S) float32        written where the score modifier reads a captured scalar: one
///                gradient per declared scalar (0 for those it does not read)
/// Fully masked rows contribute no gradient; with Lq == 0 or Lk == 0 every gradient is 0. The call
/// runs where its tensors are, as the forward's does (attngen/runtime/gpu.hpp): on a GPU when the
/// kernel was generated with a GPU target. Each gradient is summed in a fixed order, so the bits do
/// not depend on the number of threads.

#include "attngen/attention.hpp"
#include "attngen/runtime/gpu.hpp"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

struct attention_backward_args {
  tensor_view q, k, v;
  tensor_view sinks;        ///< only with attention sinks
  tensor_view mask;         ///< only if the description has an additive mask
  tensor_view key_padding;  ///< only if the description has a key-padding mask
  /// The tensors the description captures for its modifiers, in declaration order; the rest empty.
  tensor_view captures[capture_table::max_tensors];
  /// The scalars the description captures, in declaration order.
  float scalars[capture_table::max_scalars] = {};
  tensor_view output, lse, d_output;
  tensor_view dq, dk, dv;
  tensor_view d_sinks;      ///< only with attention sinks
  /// Float32, of each captured float tensor the score modifier reads, its shape; the rest empty.
  tensor_view d_captures[capture_table::max_tensors];
  tensor_view d_scalars;    ///< (S) float32, where the score modifier reads a captured scalar
  gpu_options gpu;          ///< where the call runs when not where its tensors are; CUDA context and stream
};

/// Checks `args` against `desc` (which must have .with_backward()) and the shape contract above; the
/// first problem found is returned.
status validate(const attention_desc& desc, const attention_backward_args& args);

namespace detail {

/// The arguments of a generated kernel's typed backward call: `tensors` are the views of
/// backward_arguments(desc) in its order, the captured scalars left out, and `scalars` their values.
attention_backward_args attention_backward_args_of(const attention_desc& desc, const tensor_view* tensors,
                                                   const float* scalars, const gpu_options& gpu);

}  // namespace detail

}  // namespace attngen
