#include "kernels/aot_module_call.hpp"

#include <algorithm>

#include "support/element_codec.hpp"

namespace attngen::testing {

namespace {

bool is_boolean_mask(const mha_desc& d, const std::string& name) {
  return (name == "key_padding" && d.key_padding == mask_kind::boolean) ||
         (name == "attn_mask" && d.mask == mask_kind::boolean);
}

}  // namespace

aot_module_call::aot_module_call(const module_problem& p) : p_(p) {
  const dtype t = p.desc.element_type;
  for (const auto& [name, tensor] : p.inputs) {
    if (is_boolean_mask(p.desc, name)) {
      std::vector<std::uint8_t> bytes;
      for (float v : tensor.values) bytes.push_back(v != 0.0f);
      inputs_[name] = std::move(bytes);
    } else {
      inputs_[name] = encode(t, tensor.values);
    }
  }
  output_.assign(element_count(p.output_shape()) * size_of(t), 0);
  weights_.assign(p.desc.weights == weights_output::none ? 0 : element_count(p.weights_shape()) * size_of(t), 0);
}

mha_args aot_module_call::args() {
  const dtype t = p_.desc.element_type;
  auto view = [&](const std::string& name) {
    const auto found = p_.inputs.find(name);
    if (found == p_.inputs.end()) return tensor_view{};
    return dense_view(inputs_.at(name).data(), is_boolean_mask(p_.desc, name) ? dtype::u8 : t, found->second.shape);
  };
  mha_args a;
  a.query = view("query");
  a.key = view("key");
  a.value = view("value");
  a.weights = {view("q_weight"), view("k_weight"), view("v_weight"), view("q_bias"), view("k_bias"),
               view("v_bias"),   view("bias_k"),   view("bias_v"),   view("out_weight"), view("out_bias")};
  a.key_padding_mask = view("key_padding");
  a.attn_mask = view("attn_mask");
  a.output = dense_view(output_.data(), t, p_.output_shape());
  if (p_.desc.weights != weights_output::none) a.attn_weights = dense_view(weights_.data(), t, p_.weights_shape());
  a.training = p_.training;
  a.seed = p_.seed;
  return a;
}

mha_backward_args aot_module_call::backward_args() {
  const dtype t = p_.desc.element_type;
  const mha_args forward = args();
  auto gradient = [&](const std::string& name) {
    const auto found = p_.inputs.find(name);
    if (found == p_.inputs.end()) return tensor_view{};
    std::vector<std::uint8_t>& bytes = gradients_[name];
    bytes.assign(found->second.values.size() * size_of(t), 0);
    return dense_view(bytes.data(), t, found->second.shape);
  };
  mha_backward_args a;
  a.query = forward.query;
  a.key = forward.key;
  a.value = forward.value;
  a.weights = forward.weights;
  a.key_padding_mask = forward.key_padding_mask;
  a.attn_mask = forward.attn_mask;
  a.training = forward.training;
  a.seed = forward.seed;
  a.d_output = dense_view(inputs_.at("d_output").data(), t, p_.inputs.at("d_output").shape);
  a.d_query = gradient("query");
  a.d_key = gradient("key");
  a.d_value = gradient("value");
  a.d_weights = {gradient("q_weight"), gradient("k_weight"), gradient("v_weight"), gradient("q_bias"),
                 gradient("k_bias"),   gradient("v_bias"),   gradient("bias_k"),   gradient("bias_v"),
                 gradient("out_weight"), gradient("out_bias")};
  return a;
}

std::map<std::string, std::vector<float>> aot_module_call::gradients() const {
  const dtype t = p_.desc.element_type;
  std::map<std::string, std::vector<float>> decoded;
  for (const auto& [name, bytes] : gradients_) decoded["d_" + name] = decode(t, bytes.data(), bytes.size() / size_of(t));
  return decoded;
}

std::vector<float> aot_module_call::output() const {
  return decode(p_.desc.element_type, output_.data(), output_.size() / size_of(p_.desc.element_type));
}

std::vector<float> aot_module_call::weights() const {
  return decode(p_.desc.element_type, weights_.data(), weights_.size() / size_of(p_.desc.element_type));
}

void aot_module_call::poison_outputs(std::uint8_t byte) {
  std::fill(output_.begin(), output_.end(), byte);
  std::fill(weights_.begin(), weights_.end(), byte);
}

bool aot_module_call::outputs_all_equal(std::uint8_t byte) const {
  auto all = [&](const std::vector<std::uint8_t>& v) {
    return std::all_of(v.begin(), v.end(), [&](std::uint8_t x) { return x == byte; });
  };
  return all(output_) && all(weights_);
}

packed_state_dict::packed_state_dict(const aot_module_call& call) {
  for (const char* name : {"q_weight", "k_weight", "v_weight"}) {
    const auto& bytes = call.input_bytes(name);
    in_proj_weight.insert(in_proj_weight.end(), bytes.begin(), bytes.end());
  }
  for (const char* name : {"q_bias", "k_bias", "v_bias"}) {
    const auto& bytes = call.input_bytes(name);
    in_proj_bias.insert(in_proj_bias.end(), bytes.begin(), bytes.end());
  }
  tensors = {{"in_proj_weight", in_proj_weight.data()},
             {"in_proj_bias", in_proj_bias.data()},
             {"out_proj.weight", call.input_bytes("out_weight").data()},
             {"out_proj.bias", call.input_bytes("out_bias").data()}};
}

}  // namespace attngen::testing
