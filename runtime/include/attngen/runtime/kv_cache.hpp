#pragma once
/// Appending new keys and values to an app's KV cache, on the host: the caches a description with
/// kv_lengths() or paged_kv(page_size) reads (attngen/attention.hpp), in its kv element type.
///
/// Shape contract (outermost first; B is kv_lengths' extent; KVH, D, Dv, page_size and the cache's
/// element type come from the description; total_new, Lk, num_pages and max_pages from the tensors):
///   k, v              (total_new, KVH, D) and (total_new, KVH, Dv): f32, f16 or bf16 (each its own)
///   new_offsets       (B + 1) int32: sequence b's new rows are rows new_offsets[b] to new_offsets[b+1]-1
///                     of k and v; starts at 0, non-decreasing, within total_new (rows past
///                     new_offsets[B] are not read)
///   k_cache, v_cache  kv_lengths(): (B, Lk, KVH, D) and (B, Lk, KVH, Dv);
///                     paged: pools (num_pages, page_size, KVH, D) and (num_pages, page_size, KVH, Dv)
///   k_scale, v_scale  i8 cache only: float32 (B, Lk, KVH); paged (num_pages, page_size, KVH)
///   page_table        paged only: (B, max_pages) int32; an entry for a page that receives new rows lies
///                     in [0, num_pages) (the others are not read)
///   kv_lengths        (B) int32: each from 0 to the sequence's capacity, Lk (paged: max_pages x
///                     page_size), which its new rows must not take it past
/// Every tensor is a host tensor (a device tensor is error_code::wrong_device), with strides as for a
/// kernel call: innermost 1, all positive. The tensors append_kv writes (caches, scales, kv_lengths)
/// must not overlap the ones it reads (k, v, new_offsets, page_table, kv_lengths). k_cache and v_cache
/// (and the scales) may share one allocation, e.g. keys and values interleaved per page, but not an
/// element. Pages may be shared between sequences; two sequences' new rows must not land in one row.

#include "attngen/attention.hpp"
#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

/// New keys and values of the sequences of a batch, and the cache they are appended to.
struct kv_append_args {
  tensor_view k, v;              ///< new rows packed (total_new, KVH, D) and (total_new, KVH, Dv): f32, f16 or bf16
  tensor_view new_offsets;       ///< (B + 1) int32: sequence b's new rows are rows new_offsets[b] .. new_offsets[b+1]-1
  tensor_view k_cache, v_cache;  ///< dense (B, Lk, KVH, D) / paged pools (num_pages, page_size, KVH, D), in the cache's element type
  tensor_view k_scale, v_scale;  ///< int8 caches only: float32 (B, Lk, KVH) dense, (num_pages, page_size, KVH) paged
  tensor_view page_table;        ///< paged only: (B, max_pages) int32
  tensor_view kv_lengths;        ///< (B) int32: rows each sequence already holds; advanced by the rows appended
};

/// Writes sequence b's new rows at positions kv_lengths[b], kv_lengths[b]+1, ... of its cache (through
/// its page table row when paged), converting to the cache's element type, then adds the rows appended
/// to kv_lengths[b]. Page allocation stays the app's: every page a new row lands in must already be in
/// the table.
///
/// Conversions: f32 exactly; f16 and bf16 round to nearest even (overflowing to infinity; a NaN stays a
/// NaN); i8 is quantised per (token, kv head) row: scale max|x| / 127, each element the integer nearest
/// x / scale (ties away from zero), and scale 0 with integers 0 for a row of zeros (or one so small
/// that its scale underflows float32). An i8 cache takes finite values: a row with an infinity or NaN
/// stores integers that are not meaningful.
///
/// The description must have a kv layout that keeps lengths: a dense one (every sequence has Lk keys,
/// no kv_lengths) is refused with error_code::unexpected_tensor. All checks come first, against the
/// contract above: on any error nothing is written, and the message names the argument
/// ("kv_lengths: ...", "page_table: ...").
status append_kv(const attention_desc& desc, const kv_append_args& args);

}  // namespace attngen
