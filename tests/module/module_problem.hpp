#pragma once
/// One module problem for tests: a module description, run-time sizes, and every input tensor (data,
/// weights, masks) as dense row-major float data, named as the kernel's arguments.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attngen/module.hpp"

namespace attngen::testing {

/// A dense row-major tensor held as float (values already rounded to the problem's element type;
/// boolean masks hold 0 or 1).
struct host_tensor {
  std::vector<int> shape;  ///< outermost first
  std::vector<float> values;
};

/// Elements of a dense tensor of `shape`.
std::size_t element_count(const std::vector<int>& shape);

struct module_problem {
  mha_desc desc;
  int batch = 1;
  int query_length = 1;  ///< L
  int key_length = 1;    ///< S, input keys
  std::uint64_t seed = 0;    ///< dropout seed
  bool training = false;     ///< apply dropout
  /// Kernel arguments by name: query, key, value, q_weight, k_weight, v_weight, q_bias, k_bias, v_bias,
  /// bias_k, bias_v, out_weight, out_bias, key_padding, attn_mask (those the description takes).
  std::map<std::string, host_tensor> inputs;

  /// Output shape, outermost first: (B, L, E) or (L, B, E).
  std::vector<int> output_shape() const;
  /// Weights shape: (B, H, L, S') or (B, L, S'); empty without need_weights.
  std::vector<int> weights_shape() const;
  /// "B2 L5 S7 E24 H4/2 kdim10 vdim6 bias bias_kv zero_attn batch_first causal=top_left
  ///  pad=boolean mask=additive/bh_l_s weights=averaged dropout=0.25 f32"
  std::string name() const;
};

/// Uniform random inputs in [-1, 1); weights uniform in +-1/sqrt(fan_in) like PyTorch's init; biases
/// in +-0.5; masks with some masked entries (never every key of a row unless `allow_empty_rows`).
/// With self_attention there is no key or value, and key_length is query_length.
module_problem make_random_module_problem(const mha_desc& desc, int batch, int query_length, int key_length,
                                          std::uint32_t seed, bool allow_empty_rows = false);

/// Adds a random gradient of the output, "d_output" (output_shape(), uniform in [-1, 1)), for a
/// backward call.
void add_output_gradient(module_problem& p, std::uint32_t seed);

}  // namespace attngen::testing
