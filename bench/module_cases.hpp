#pragma once
/// The module cases: nn.MultiheadAttention's whole forward (projections, attention, output projection,
/// weights) as configurations of the test registry's module table with bench sizes, against PyTorch
/// 1.13's module in eval/no_grad and oneDNN's matmul projections around its attention graph.

#include <string>
#include <vector>

#include "attngen/runtime.hpp"

namespace attngen::bench {

struct module_bench_case {
  std::string name;
  mha_desc desc;
  status (*run)(const mha_args&) = nullptr;
  int batch = 0, queries = 0, keys = 0;  ///< B, L, S

  /// FLOPs of the four linear layers: 2·B·(L·E·E + S·kdim·KVE + S·vdim·KVE + L·E·E).
  double projection_flops() const;
  /// FLOPs of the attention, 2·B·H·L·S·2·head_dim, plus its weights output's second pass of q·k.
  double attention_flops() const;
  double flops() const { return projection_flops() + attention_flops(); }
};

/// Every module case of the registry.
const std::vector<module_bench_case>& module_cases();

/// attngen's median seconds for `c` (negative when a call fails) and the projections' share of it,
/// on random inputs, boolean key padding hiding the last eighth of each sequence.
struct module_timing {
  double seconds = -1, projection_share = 0;
};
module_timing time_module(const module_bench_case& c, int threads);

/// The arguments of peer_pytorch_module.py for `c` (after the thread count).
std::string pytorch_module_arguments(const module_bench_case& c);

/// oneDNN's median seconds: matmul projections (with bias) around the attention graph of
/// peer_onednn.hpp and an output matmul; NaN where oneDNN is missing.
double time_onednn_module(const module_bench_case& c);

}  // namespace attngen::bench
