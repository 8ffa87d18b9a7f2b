#pragma once
/// The arguments of an attention kernel call, and their validation.
///
/// Shape contract (outermost first; B, Lq, Lk are any positive run-time values, the rest come from
/// the kernel's description):
///   q            (B, Lq, H,   D)    element type of the description
///   k            (B, Lk, KVH, D)
///   v            (B, Lk, KVH, Dv)
///   mask         additive, one of (Lq, Lk), (H, Lq, Lk), (B, H, Lq, Lk), (B, 1, Lq, Lk) as described
///   key_padding  (B, Lk) bytes, polarity as described
///   output       (B, Lq, H, Dv)
///   lse          (B, H, Lq) float32
///   captures[n]  the description's n-th captured tensor (attngen/modifiers.hpp): its declared type
///                (f32 or i32) and extents (batch = B, heads = H, query_length = Lq, key_length = Lk,
///                or a fixed size); any positive strides with the innermost 1
///   scalars[n]   the n-th captured scalar
/// Tensors the description does not take must be left empty. B == 0 or Lq == 0 writes nothing;
/// Lk == 0 makes every row fully masked (output 0, lse -inf).

#include "attngen/attention.hpp"
#include "attngen/runtime/gpu.hpp"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

struct attention_args {
  tensor_view q, k, v;
  tensor_view mask;         ///< only if the description has an additive mask
  tensor_view key_padding;  ///< only if the description has a key-padding mask
  tensor_view output;
  tensor_view lse;          ///< only if the description returns the log-sum-exp
  /// The tensors the description captures for its modifiers, in declaration order; the rest empty.
  tensor_view captures[capture_table::max_tensors];
  /// The scalars the description captures, in declaration order.
  float scalars[capture_table::max_scalars] = {};
  gpu_options gpu;          ///< where the call runs when not where its tensors are; CUDA context and stream
};

/// Checks `args` against `desc` and the shape contract above; the first problem found is returned.
status validate(const attention_desc& desc, const attention_args& args);

namespace detail {

/// The arguments of a generated kernel's typed call, run(q, k, v, ..., output, ...): `tensors` are
/// the views of kernel_arguments(desc) in its order (attngen/arguments.hpp), the captured scalars
/// left out, and `scalars` the captured scalars' values.
attention_args attention_args_of(const attention_desc& desc, const tensor_view* tensors, const float* scalars,
                                 const gpu_options& gpu);

}  // namespace detail

/// Number of threads kernels may use (Halide's thread pool, shared by all kernels of the process).
/// 0 restores the default (the number of CPUs, or HL_NUM_THREADS).
void set_num_threads(int threads);

}  // namespace attngen
