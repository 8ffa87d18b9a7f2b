#pragma once
/// A batch of sequences of their own lengths, for descriptions with ragged queries, per-sequence kv
/// lengths or a paged KV cache: each sequence as its own dense problem (batch 1) that the float64
/// reference checks, and the call's tensors built from them in the description's layouts. Paged
/// caches get shuffled pages, sequences 0 and 1 share their first page where both fill it, and the
/// pool holds unused pages; everything a kernel must not read (keys past a sequence's length,
/// unused pages and table entries) holds NaN or out-of-range values.

#include <cstdint>
#include <vector>

#include "attngen/arguments.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

struct sequence_batch {
  attention_desc desc;
  /// Sequence b's own problem: batch 1, its Lq and Lk; int8 keys and values hold the dequantised
  /// values, which the kernel computes on.
  std::vector<attention_problem> sequences;
  /// Int8 keys and values: each sequence's problem with the values before quantisation.
  std::vector<attention_problem> unquantised;
  int key_capacity = 0;  ///< Lk of a dense cache; max_pages x page_size of a paged one
  int num_pages = 0, max_pages = 0;

  // The call's tensors, in their element types.
  std::vector<std::uint8_t> q, k, v, mask, key_padding, output;
  std::vector<float> k_scale, v_scale, sinks, lse;
  std::vector<std::int32_t> q_offsets, page_table, kv_lengths;
  std::vector<std::vector<float>> captures;

  /// The call's arguments: views of the tensors above.
  attention_args args();
  /// The view of this call's tensor for `argument` (empty when not taken).
  tensor_view view(const kernel_argument& argument);
  /// Sequence b's rows of the output (1, Lq_b, H, Dv) and log-sum-exp (1, H, Lq_b) as float.
  std::vector<float> output_of(int b) const;
  std::vector<float> lse_of(int b) const;
  int total_queries() const;
};

/// A batch of sequences with `query_lengths[b]` queries and `key_lengths[b]` keys (with dense
/// queries, every query length the same), random data from `seed`. Captured tensors may have heads
/// and fixed extents only.
sequence_batch make_sequence_batch(const attention_desc& desc, const std::vector<int>& query_lengths,
                                   const std::vector<int>& key_lengths, std::uint32_t seed);

/// "Lq {1, 0, 37} Lk {5, 16, 0}"
std::string lengths_text(const std::vector<int>& query_lengths, const std::vector<int>& key_lengths);

}  // namespace attngen::testing
