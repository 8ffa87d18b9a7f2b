#pragma once
/// Builds runtime arguments for a generated module kernel from a module problem, holding the typed
/// storage.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attngen/runtime.hpp"
#include "module/module_problem.hpp"
#include "support/dense_view.hpp"

namespace attngen::testing {

class aot_module_call {
 public:
  explicit aot_module_call(const module_problem& p);

  /// Dense views of every tensor the problem's description takes.
  mha_args args();
  /// The backward's arguments: the same inputs, the problem's "d_output" (add_output_gradient), and
  /// a gradient of each input and weight, written here.
  mha_backward_args backward_args();
  /// The gradients the backward wrote, by name ("d_query", "d_q_weight", ...).
  std::map<std::string, std::vector<float>> gradients() const;
  /// The stored bytes of input `name` (boolean masks one byte per element).
  const std::vector<std::uint8_t>& input_bytes(const std::string& name) const { return inputs_.at(name); }
  std::vector<float> output() const;
  std::vector<float> weights() const;
  /// Sets every output byte to `byte`, so a test can tell whether anything was written.
  void poison_outputs(std::uint8_t byte);
  bool outputs_all_equal(std::uint8_t byte) const;

 private:
  const module_problem& p_;
  std::map<std::string, std::vector<std::uint8_t>> inputs_;
  std::vector<std::uint8_t> output_, weights_;
  std::map<std::string, std::vector<std::uint8_t>> gradients_;  ///< by input name
};

/// The state_dict of PyTorch's nn.MultiheadAttention for a call's weights when kdim == vdim ==
/// embed_dim and with bias: in_proj_weight and in_proj_bias packed, out_proj.weight, out_proj.bias.
struct packed_state_dict {
  std::vector<std::uint8_t> in_proj_weight, in_proj_bias;
  std::vector<state_dict_tensor> tensors;

  explicit packed_state_dict(const aot_module_call& call);
};

}  // namespace attngen::testing
