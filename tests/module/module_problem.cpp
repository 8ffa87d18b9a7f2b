#include "module/module_problem.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "attngen/module_text_format.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

std::size_t element_count(const std::vector<int>& shape) {
  std::size_t n = 1;
  for (int e : shape) n *= std::size_t(e);
  return n;
}

std::vector<int> module_problem::output_shape() const {
  return desc.batch_major ? std::vector<int>{batch, query_length, desc.embed}
                          : std::vector<int>{query_length, batch, desc.embed};
}

std::vector<int> module_problem::weights_shape() const {
  const int columns = key_length + desc.extra_keys();
  switch (desc.weights) {
    case weights_output::per_head: return {batch, desc.num_heads, query_length, columns};
    case weights_output::averaged: return {batch, query_length, columns};
    case weights_output::none: break;
  }
  return {};
}

std::string module_problem::name() const {
  std::ostringstream s;
  s << "B" << batch << " L" << query_length << " S" << key_length << " E" << desc.embed << " H" << desc.num_heads
    << "/" << desc.effective_kv_heads();
  if (desc.key_dim != mha_desc::unset) s << " kdim" << desc.key_dim;
  if (desc.value_dim != mha_desc::unset) s << " vdim" << desc.value_dim;
  s << (desc.projection_bias ? " bias" : " no_bias");
  if (desc.bias_kv) s << " bias_kv";
  if (desc.zero_attn) s << " zero_attn";
  s << (desc.batch_major ? " batch_first" : " sequence_first");
  if (desc.self_attn) s << " self_attention";
  if (desc.is_causal())
    s << " causal=" << name_of(desc.causal_mode);
  if (desc.key_padding != mask_kind::none) s << " pad=" << name_of(desc.key_padding);
  if (desc.mask != mask_kind::none) s << " mask=" << name_of(desc.mask) << "/" << name_of(desc.mask_dims);
  if (desc.weights != weights_output::none)
    s << " weights=" << name_of(desc.weights);
  if (desc.has_dropout()) s << " dropout=" << desc.dropout_p << (training ? " training" : " inference");
  s << " " << name_of(desc.element_type);
  return s.str();
}

module_problem make_random_module_problem(const mha_desc& desc, int batch, int query_length, int key_length,
                                          std::uint32_t seed, bool allow_empty_rows) {
  module_problem p;
  p.desc = desc;
  p.batch = batch;
  p.query_length = query_length;
  p.key_length = desc.self_attn ? query_length : key_length;
  p.seed = 0x9e3779b97f4a7c15ULL ^ seed;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const dtype element = desc.element_type;
  auto add = [&](const std::string& name, std::vector<int> shape, float scale) {
    host_tensor t{std::move(shape), {}};
    t.values.resize(element_count(t.shape));
    for (float& v : t.values) v = round_to(element, scale * unit(rng));
    p.inputs[name] = std::move(t);
  };
  const int E = desc.embed, KVE = desc.kv_embed(), kdim = desc.effective_kdim(), vdim = desc.effective_vdim();
  const int B = batch, L = query_length, S = p.key_length, H = desc.num_heads;
  auto sequence = [&](int length, int features) {
    return desc.batch_major ? std::vector<int>{B, length, features} : std::vector<int>{length, B, features};
  };
  add("query", sequence(L, E), 1.0f);
  if (!desc.self_attn) {
    add("key", sequence(S, kdim), 1.0f);
    add("value", sequence(S, vdim), 1.0f);
  }
  add("q_weight", {E, E}, 1.0f / std::sqrt(float(E)));
  add("k_weight", {KVE, kdim}, 1.0f / std::sqrt(float(kdim)));
  add("v_weight", {KVE, vdim}, 1.0f / std::sqrt(float(vdim)));
  add("out_weight", {E, E}, 1.0f / std::sqrt(float(E)));
  if (desc.projection_bias) {
    add("q_bias", {E}, 0.5f);
    add("k_bias", {KVE}, 0.5f);
    add("v_bias", {KVE}, 0.5f);
    add("out_bias", {E}, 0.5f);
  }
  if (desc.bias_kv) {
    add("bias_k", {KVE}, 1.0f);
    add("bias_v", {KVE}, 1.0f);
  }
  // Masks hide about a quarter of the entries; key 0 stays visible (unless empty rows are wanted),
  // so no row is fully masked by the masks alone. Additive masks mix -inf with finite biases.
  auto mask_value = [&](mask_kind kind, bool first_key) {
    const bool hide = unit(rng) < -0.5f && (allow_empty_rows || !first_key);
    if (kind == mask_kind::boolean) return hide ? 1.0f : 0.0f;
    return hide ? -INFINITY : round_to(element, unit(rng));
  };
  if (desc.key_padding != mask_kind::none) {
    host_tensor t{{B, S}, {}};
    for (int b = 0; b < B; ++b)
      for (int s = 0; s < S; ++s) t.values.push_back(mask_value(desc.key_padding, s == 0));
    p.inputs["key_padding"] = std::move(t);
  }
  if (desc.mask != mask_kind::none) {
    std::vector<int> shape = desc.mask_dims == attn_mask_shape::l_s      ? std::vector<int>{L, S}
                             : desc.mask_dims == attn_mask_shape::bh_l_s ? std::vector<int>{B * H, L, S}
                                                                          : std::vector<int>{B, H, L, S};
    host_tensor t{shape, {}};
    const std::size_t count = element_count(shape);
    for (std::size_t e = 0; e < count; ++e) t.values.push_back(mask_value(desc.mask, e % S == 0));
    p.inputs["attn_mask"] = std::move(t);
  }
  return p;
}

void add_output_gradient(module_problem& p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  host_tensor t{p.output_shape(), {}};
  t.values.resize(element_count(t.shape));
  for (float& v : t.values) v = round_to(p.desc.element_type, unit(rng));
  p.inputs["d_output"] = std::move(t);
}

}  // namespace attngen::testing
