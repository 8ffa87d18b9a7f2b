#pragma once
/// The arguments of an attention kernel call, and their validation.
///
/// Shape contract (outermost first; B, Lq, Lk are any positive run-time values, the rest come from
/// the kernel's description; attngen/arguments.hpp states it as data, each generated header in full):
///   q            (B, Lq, H,   D)    element type of the description; ragged: (total_q, H, D)
///   q_offsets    ragged: (B + 1) int32, sequence b's queries are rows q_offsets[b] to q_offsets[b+1]-1,
///                non-decreasing and within total_q (rows outside every sequence are not written)
///   k            (B, Lk, KVH, D)    the KV element type; paged: the pool (num_pages, page_size, KVH, D)
///   v            (B, Lk, KVH, Dv)   paged: (num_pages, page_size, KVH, Dv)
///   k_scale, v_scale  int8 K/V: float32 (B, Lk, KVH), paged (num_pages, page_size, KVH)
///   page_table   paged: (B, max_pages) int32; entries for a sequence's pages lie in [0, num_pages)
///   kv_lengths   per-sequence lengths or paged: (B) int32, each within Lk (max_pages x page_size paged)
///   positions    global positions: (4) int32 {query_start, key_start, query_total, key_total}, the
///                call's queries and keys as slices of one sequence; starts from 0, start + Lq within
///                query_total and start + Lk within key_total; host memory
///   sinks        (H) float32
///   mask         additive, one of (Lq, Lk), (H, Lq, Lk), (B, H, Lq, Lk), (B, 1, Lq, Lk) as described;
///                ragged, Lq is total_q; paged, Lk is max_pages x page_size
///   key_padding  (B, Lk) bytes, polarity as described
///   output       (B, Lq, H, Dv); ragged (total_q, H, Dv)
///   lse          (B, H, Lq) float32; ragged (H, total_q)
///   captures[n]  the description's n-th captured tensor (attngen/modifiers.hpp): its declared type
///                (f32 or i32) and extents (batch = B, heads = H, query_length = Lq, key_length = Lk,
///                or a fixed size; with global positions query_length = query_total, key_length =
///                key_total); any positive strides with the innermost 1
///   scalars[n]   the n-th captured scalar
/// Tensors the description does not take must be left empty. B == 0 or Lq == 0 writes nothing;
/// Lk == 0 makes every row fully masked (output 0, lse -inf). q_offsets, page_table, kv_lengths and
/// positions are read by the runtime to split the call into sequences: host memory, even for a call on a GPU.

#include "attngen/attention.hpp"
#include "attngen/runtime/gpu.hpp"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

struct attention_args {
  tensor_view q, k, v;
  tensor_view q_offsets;         ///< only with ragged queries: (B + 1) int32, host memory
  tensor_view k_scale, v_scale;  ///< only with int8 keys and values
  tensor_view page_table;        ///< only with a paged cache: (B, max_pages) int32, host memory
  tensor_view kv_lengths;        ///< only with per-sequence kv lengths: (B) int32, host memory
  tensor_view positions;         ///< only with global positions: (4) int32, host memory
  tensor_view sinks;             ///< only with attention sinks: (H) float32
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

/// Number of threads kernels may use, the calling thread included (attngen's thread pool, shared by
/// all kernels of the process; its idle workers spin about 2 ms before they sleep, so back-to-back
/// calls find them awake). 0 restores the default (HL_NUM_THREADS where set, else the CPUs). A
/// kernel called while another thread's kernel has the pool runs on its calling thread alone.
void set_num_threads(int threads);

/// Frees the scratch memory kernels keep between calls. Kernels keep the large buffers of a call (K
/// and V staged per task, split states, a module's projections; at most detail::most_cached_bytes)
/// for the next call, so that it does not map and fault them in afresh; an app done with attention
/// for a while can hand them back. Safe at any time: a call running meanwhile keeps its own buffers.
void release_cached_memory();

}  // namespace attngen
