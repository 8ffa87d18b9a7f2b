#pragma once
/// A call whose sequences differ in length (ragged queries, per-sequence kv lengths, a paged cache)
/// runs as one kernel call per sequence, on views of the call's tensors: each sequence's extents and
/// the view of each argument its kernel call takes. Header-only: the runtime cuts calls with it, and
/// the JIT tests cut theirs the same way. The contents it reads are checked first
/// (runtime/src/sequence_checks.hpp).

#include <cstdint>

#include "attngen/arguments.hpp"
#include "attngen/runtime/attention_call.hpp"

namespace attngen::detail {

/// Sequence b of a call: its queries (rows first_query .. first_query + queries - 1 of the packed
/// ones, or of its own batch row) and its keys.
struct sequence_extents {
  std::int64_t index = 0, first_query = 0, queries = 0, keys = 0;
};

/// The view of an argument that the kernel call for one sequence takes, and which of its dimensions
/// (outermost first) is the batch dimension the kernel indexes at the sequence's index, as the Halide
/// buffer's min (-1: none; such a view is the whole tensor, read at the sequence's index, or has no
/// batch).
struct sequence_view {
  tensor_view view;
  int batch_dim = -1;
};

namespace sequence_cut {

// Element n of a validated int32 host vector.
inline std::int32_t element(const tensor_view& t, std::int64_t n) {
  return static_cast<const std::int32_t*>(t.data)[n * t.strides[0]];
}

// Entry (b, p) of a validated page table: the pool page holding sequence b's p-th page of keys.
inline std::int32_t page_entry(const tensor_view& table, std::int64_t b, std::int64_t p) {
  return static_cast<const std::int32_t*>(table.data)[b * table.strides[0] + p * table.strides[1]];
}

// `t` with dimension `dim` cut to [first, first + extent).
inline tensor_view cut(tensor_view t, int dim, std::int64_t first, std::int64_t extent) {
  t.data = static_cast<std::uint8_t*>(t.data) + first * t.strides[dim] * size_of(t.type);
  t.shape[dim] = extent;
  return t;
}

// A view of rank one more than `t`'s, the new outermost dimension of extent 1: the batch of one
// sequence of packed rows.
inline tensor_view with_batch_of_one(const tensor_view& t) {
  tensor_view v = t;
  v.rank = t.rank + 1;
  v.shape[0] = 1;
  v.strides[0] = 1;
  for (int d = 0; d < t.rank; ++d) {
    v.shape[d + 1] = t.shape[d];
    v.strides[d + 1] = t.strides[d];
  }
  return v;
}

// The keys sequence b can hold: Lk, or its page table row's pages.
inline std::int64_t key_capacity(const attention_desc& desc, const attention_args& args) {
  return desc.is_paged() ? args.page_table.shape[1] * desc.kv_page_size : args.k.shape[1];
}

}  // namespace sequence_cut

/// The call's sequence count, B.
inline std::int64_t sequence_count(const attention_desc& desc, const attention_args& args) {
  if (desc.is_ragged()) return args.q_offsets.shape[0] - 1;
  return args.q.shape[0];
}

/// Sequence b's extents, from a call whose sequence tensors are checked.
inline sequence_extents sequence_of(const attention_desc& desc, const attention_args& args, std::int64_t b) {
  sequence_extents s;
  s.index = b;
  if (desc.is_ragged()) {
    s.first_query = sequence_cut::element(args.q_offsets, b);
    s.queries = sequence_cut::element(args.q_offsets, b + 1) - s.first_query;
  } else {
    s.queries = args.q.shape[1];
  }
  s.keys = desc.has_kv_lengths() ? sequence_cut::element(args.kv_lengths, b) : args.k.shape[1];
  return s;
}

/// The view of `argument` (given as `given`) that the kernel call for sequence `s` takes.
inline sequence_view sequence_view_of(const attention_desc& desc, const kernel_argument& argument, const tensor_view& given,
                               const sequence_extents& s) {
  switch (argument.slot) {
    case argument_slot::q:
    case argument_slot::output:
      // (1, Lq_b, H, D) from the sequence's batch row or its packed rows.
      if (desc.is_ragged()) return {sequence_cut::with_batch_of_one(sequence_cut::cut(given, 0, s.first_query, s.queries)), 0};
      return {sequence_cut::cut(given, 0, s.index, 1), 0};
    case argument_slot::lse:
      // (1, H, Lq_b) from (B, H, Lq) or the packed (H, total_q).
      if (desc.is_ragged()) return {sequence_cut::with_batch_of_one(sequence_cut::cut(given, 1, s.first_query, s.queries)), 0};
      return {sequence_cut::cut(given, 0, s.index, 1), 0};
    case argument_slot::k:
    case argument_slot::v:
    case argument_slot::k_scale:
    case argument_slot::v_scale:
      // Dense keys are cut to the sequence's; a paged pool is read through the page table.
      if (desc.has_kv_lengths() && !desc.is_paged()) return {sequence_cut::cut(given, 1, 0, s.keys), -1};
      return {given, -1};
    case argument_slot::mask:
      // Packed query rows: the sequence's.
      if (desc.is_ragged()) return {sequence_cut::cut(given, argument.rank - 2, s.first_query, s.queries), -1};
      return {given, -1};
    case argument_slot::q_offsets:
    case argument_slot::page_table:
    case argument_slot::kv_lengths:
    case argument_slot::sinks:
    case argument_slot::key_padding:
    case argument_slot::capture:
    case argument_slot::scalars:
    case argument_slot::positions:
      break;
  }
  return {given, -1};
}

}  // namespace attngen::detail
