#include <string>
#include <vector>

#include "attngen/runtime/module_call.hpp"

namespace attngen {

namespace {

// A dense view of `shape` starting `offset` elements into `data`: read-only over const data.
tensor_view slice(const void* data, dtype type, std::int64_t offset, std::initializer_list<std::int64_t> shape) {
  return make_tensor(static_cast<const std::uint8_t*>(data) + offset * size_of(type), type, shape);
}
tensor_view slice(void* data, dtype type, std::int64_t offset, std::initializer_list<std::int64_t> shape) {
  return make_tensor(static_cast<std::uint8_t*>(data) + offset * size_of(type), type, shape);
}

// The weights' views in the state_dict's tensors: the weights (state_dict_tensor, read-only) or
// their gradients (state_dict_gradient, written).
template <typename Tensor>
status views_from_state_dict(const mha_desc& desc, std::span<const Tensor> tensors, mha_weights& result) {
  // Built here and given to `result` only on success: an error writes nothing.
  mha_weights weights;
  const std::int64_t E = desc.embed, KVE = desc.kv_embed(), kdim = desc.effective_kdim(), vdim = desc.effective_vdim();
  const bool packed = kdim == E && vdim == E;
  const dtype type = desc.element_type;

  std::vector<std::string_view> keys;
  if (packed) keys = {"in_proj_weight"};
  else keys = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};
  keys.push_back("out_proj.weight");
  if (desc.projection_bias) keys.insert(keys.end(), {"in_proj_bias", "out_proj.bias"});
  if (desc.bias_kv) keys.insert(keys.end(), {"bias_k", "bias_v"});

  std::vector<decltype(Tensor::data)> found(keys.size(), nullptr);
  for (const Tensor& given : tensors) {
    const std::string name(given.name);
    std::size_t k = 0;
    while (k < keys.size() && keys[k] != given.name) ++k;
    if (k == keys.size())
      return status(error_code::unexpected_tensor,
                    "state_dict: `" + name + "` is not a weight of this description's module");
    if (found[k] != nullptr) return status(error_code::unexpected_tensor, "state_dict: `" + name + "` given twice");
    if (given.data == nullptr) return status(error_code::null_pointer, "state_dict: `" + name + "` data pointer is null");
    found[k] = given.data;
  }
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (found[k] == nullptr)
      return status(error_code::null_pointer, "state_dict: `" + std::string(keys[k]) + "` is missing");
  auto tensor = [&](std::string_view key) {
    std::size_t k = 0;
    while (keys[k] != key) ++k;
    return found[k];
  };

  if (packed) {
    const auto in_proj = tensor("in_proj_weight");
    weights.q_weight = slice(in_proj, type, 0, {E, E});
    weights.k_weight = slice(in_proj, type, E * E, {KVE, E});
    weights.v_weight = slice(in_proj, type, (E + KVE) * E, {KVE, E});
  } else {
    weights.q_weight = slice(tensor("q_proj_weight"), type, 0, {E, E});
    weights.k_weight = slice(tensor("k_proj_weight"), type, 0, {KVE, kdim});
    weights.v_weight = slice(tensor("v_proj_weight"), type, 0, {KVE, vdim});
  }
  weights.out_weight = slice(tensor("out_proj.weight"), type, 0, {E, E});
  if (desc.projection_bias) {
    const auto in_bias = tensor("in_proj_bias");
    weights.q_bias = slice(in_bias, type, 0, {E});
    weights.k_bias = slice(in_bias, type, E, {KVE});
    weights.v_bias = slice(in_bias, type, E + KVE, {KVE});
    weights.out_bias = slice(tensor("out_proj.bias"), type, 0, {E});
  }
  if (desc.bias_kv) {
    weights.bias_k = slice(tensor("bias_k"), type, 0, {KVE});
    weights.bias_v = slice(tensor("bias_v"), type, 0, {KVE});
  }
  result = weights;
  return {};
}

}  // namespace

status weights_from_state_dict(const mha_desc& desc, std::span<const state_dict_tensor> tensors, mha_weights& weights) {
  return views_from_state_dict(desc, tensors, weights);
}

status gradients_from_state_dict(const mha_desc& desc, std::span<const state_dict_gradient> gradients,
                                 mha_weights& d_weights) {
  return views_from_state_dict(desc, gradients, d_weights);
}

}  // namespace attngen
