#pragma once
/// The benchmark's named cases: shapes, and the generated kernel that runs each.

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

  bool causal() const { return desc.is_causal(); }
  /// Useful FLOPs: 2·B·H·Lq·Lk·(D + Dv), halved for causal attention with Lq == Lk.
  double flops() const;
  /// Bytes a call must move at least: q, k, v read once, output written once.
  double bytes() const;
};

/// All cases, in the order the table prints them.
const std::vector<bench_case>& all_cases();

}  // namespace attngen::bench
