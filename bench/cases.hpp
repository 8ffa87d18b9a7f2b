#pragma once
/// The benchmark's named cases: the configurations of the test registry
/// (tests/support/configurations.hpp) with bench sizes, and the generated kernel that runs each.

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/runtime.hpp"

namespace attngen::bench {

using kernel_entry = status (*)(const attention_args&);

struct bench_case {
  std::string name;
  attention_desc desc;     ///< the generated kernel's description
  kernel_entry run;        ///< the generated kernel
  int batch, query_length, key_length;
  /// K/V caches cycled between timed calls so they come from DRAM (decode): 1 = no rotation.
  int rotated_caches = 1;
  /// With a document mask: this many equal documents, their ids passed as the captured tensor.
  int documents = 0;
  /// The peers compute this case's attention (they have no sliding windows or document masks).
  bool peers_compute_it = true;
  /// With a sliding window: the keys left of the diagonal a query sees (it is causal too).
  int window = 0;

  bool causal() const { return desc.is_causal(); }
  /// (query, key) pairs a head computes: Lq·Lk, or the pairs the causal mask, the window or the
  /// documents leave visible.
  double visible_pairs() const;
  /// Useful FLOPs: 2·B·H·(D + Dv) per visible pair.
  double flops() const;
  /// Bytes a call must move at least: q, k, v read once, output written once.
  double bytes() const;
  /// With documents: the (B, Lk) document id of every key, `documents` equal runs per sequence.
  std::vector<std::int32_t> document_ids() const;
};

/// All cases, in the order the table prints them: the registry's.
const std::vector<bench_case>& all_cases();

}  // namespace attngen::bench
