#include "problem.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "attngen/text_format.hpp"

namespace attngen::testing {

std::vector<int> attention_problem::mask_shape() const {
  const int H = desc.num_heads, Lq = query_length, Lk = key_length, B = batch;
  switch (desc.additive_mask_shape) {
    case attngen::mask_shape::lq_lk: return {Lq, Lk};
    case attngen::mask_shape::h_lq_lk: return {H, Lq, Lk};
    case attngen::mask_shape::b_h_lq_lk: return {B, H, Lq, Lk};
    case attngen::mask_shape::b_1_lq_lk: return {B, 1, Lq, Lk};
    case attngen::mask_shape::none: break;
  }
  return {};
}

std::size_t attention_problem::output_size() const {
  return std::size_t(batch) * query_length * desc.num_heads * desc.effective_v_head_dim();
}

std::size_t attention_problem::lse_size() const { return std::size_t(batch) * desc.num_heads * query_length; }

std::string attention_problem::name() const {
  std::string n = "B" + std::to_string(batch) + " H" + std::to_string(desc.num_heads) + "/" +
                  std::to_string(desc.effective_kv_heads()) + " D" + std::to_string(desc.qk_head_dim) + "/" +
                  std::to_string(desc.effective_v_head_dim()) + " Lq" + std::to_string(query_length) + " Lk" +
                  std::to_string(key_length);
  if (desc.is_causal()) n += " causal=" + std::string(name_of(desc.causal_mode));
  if (desc.has_additive_mask()) n += " mask=" + std::string(name_of(desc.additive_mask_shape));
  if (desc.has_key_padding_mask()) n += " pad=" + std::string(name_of(desc.key_padding));
  if (desc.has_scale) n += " scale=" + std::to_string(desc.scale_value);
  if (desc.lse_output) n += " lse";
  n += " " + std::string(name_of(desc.element_type));
  return n;
}

float round_to(dtype type, float value) {
  if (type == dtype::bf16) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
    bits &= 0xffff0000u;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  if (type == dtype::f16) return static_cast<float>(static_cast<_Float16>(value));
  return value;
}

attention_problem make_random_problem(const attention_desc& desc, int batch, int query_length, int key_length,
                                      std::uint32_t seed) {
  attention_problem p;
  p.desc = desc;
  p.batch = batch;
  p.query_length = query_length;
  p.key_length = key_length;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto fill = [&](std::vector<float>& data, std::size_t n) {
    data.resize(n);
    for (auto& x : data) x = round_to(desc.element_type, uniform(rng));
  };
  const std::size_t H = desc.num_heads, KVH = desc.effective_kv_heads();
  fill(p.q, std::size_t(batch) * query_length * H * desc.qk_head_dim);
  fill(p.k, std::size_t(batch) * key_length * KVH * desc.qk_head_dim);
  fill(p.v, std::size_t(batch) * key_length * KVH * desc.effective_v_head_dim());
  if (desc.has_additive_mask()) {
    std::size_t n = 1;
    for (int extent : p.mask_shape()) n *= extent;
    fill(p.mask, n);
    // About one entry in eight masks its key out entirely.
    std::bernoulli_distribution masked(0.125);
    for (auto& x : p.mask)
      if (masked(rng)) x = -std::numeric_limits<float>::infinity();
  }
  if (desc.has_key_padding_mask()) {
    // Each batch keeps a random prefix of its keys (at least one), as padded sequences do.
    p.key_padding.resize(std::size_t(batch) * key_length);
    const bool true_ignores = desc.key_padding == padding_polarity::true_means_ignore;
    for (int b = 0; b < batch; ++b) {
      const int kept = 1 + int(rng() % unsigned(key_length));
      for (int j = 0; j < key_length; ++j) {
        const bool keep = j < kept;
        p.key_padding[std::size_t(b) * key_length + j] = (keep != true_ignores) ? 1 : 0;
      }
    }
  }
  return p;
}

}  // namespace attngen::testing
