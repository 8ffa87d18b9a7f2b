#pragma once
/// The benchmark's named cases: the configurations of the test registry
/// (tests/support/configurations.hpp) with bench sizes, and the generated kernel that runs each.

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/runtime.hpp"

namespace attngen::bench {

using kernel_entry = status (*)(const attention_args&);
using backward_entry = status (*)(const attention_backward_args&);

/// One sequence of a batch: its query and key counts.
struct sequence_size {
  int queries = 0, keys = 0;
};

struct bench_case {
  std::string name;
  attention_desc desc;     ///< the generated kernel's description
  kernel_entry run;        ///< the generated kernel
  backward_entry run_backward = nullptr;  ///< its backward pass, where the description has one
  int batch, query_length, key_length;  ///< with sequences of their own lengths: the largest
  /// K/V caches cycled between timed calls so they come from DRAM (decode): 1 = no rotation.
  int rotated_caches = 1;
  /// With a document mask: this many equal documents, their ids passed as the captured tensor.
  int documents = 0;
  /// The peers compute this case's attention (they have no sliding windows, document masks or caches).
  bool peers_compute_it = true;
  /// With a sliding window: the keys left of the diagonal a query sees (it is causal too).
  int window = 0;
  /// With per-sequence kv lengths: each sequence's drawn (fixed seed) from this to key_length.
  int shortest_keys = 0;
  /// Ragged self-attention: each sequence's query and key count.
  std::vector<int> ragged_lengths;
  /// The configuration that runs the same sequences another way, for a time ratio (empty: none),
  /// its description and its kernel.
  std::string compared_with;
  attention_desc compared_desc;
  kernel_entry compared_run = nullptr;

  bool causal() const { return desc.is_causal(); }
  /// A training case: the forward and the backward are timed (train_cases.hpp).
  bool trains() const { return desc.backward; }
  /// Sequences differ in length: a KV cache or ragged queries (cache_cases.hpp times these).
  bool has_sequence_lengths() const { return desc.has_sequence_lengths(); }
  /// An f32 description on the tensor cores: its CPU code is the plain f32 one's, so it is timed on
  /// GPUs only.
  bool gpu_only() const { return desc.element_type == dtype::f32 && desc.tensor_core_type() != dtype::f32; }
  /// Every sequence's query and key counts: batch × (Lq, Lk) unless they differ.
  std::vector<sequence_size> sequences() const;
  /// (query, key) pairs a head computes over the batch: Lq·Lk per sequence, or the pairs the causal
  /// mask, the window or the documents leave visible.
  double visible_pairs() const;
  /// Useful FLOPs: 2·H·(D + Dv) per visible pair.
  double flops() const;
  /// Bytes a call must move at least: q, k, v (in their own element types, int8 with its scales)
  /// read once, output written once.
  double bytes() const;
  /// With documents: the (B, Lk) document id of every key, `documents` equal runs per sequence.
  std::vector<std::int32_t> document_ids() const;
};

/// All cases, in the order the table prints them: the registry's. Several may share a name (one
/// per KV element type), and `--case NAME` runs them all.
const std::vector<bench_case>& all_cases();

}  // namespace attngen::bench
