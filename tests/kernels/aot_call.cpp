#include "kernels/aot_call.hpp"

#include <algorithm>
#include <cstring>

#include "support/dense_view.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

aot_call::aot_call(const attention_problem& p) : p_(p) {
  const dtype t = p.desc.element_type;
  q_ = encode(t, p.q);
  k_ = encode(t, p.k);
  v_ = encode(t, p.v);
  mask_ = encode(t, p.mask);
  output_.assign(p.output_size() * size_of(t), 0);
  lse_.assign(p.desc.lse_output ? p.lse_size() : 0, 0.0f);
  for (int n = 0; n < p.desc.captures.tensor_count; ++n) {
    const std::vector<float>& values = p.captures[n];
    std::vector<std::uint8_t>& bytes = captures_.emplace_back(values.size() * 4);
    for (std::size_t x = 0; x < values.size(); ++x) {
      if (p.desc.captures.tensors[n].type == capture_type::i32) {
        const std::int32_t value = std::int32_t(values[x]);
        std::memcpy(bytes.data() + 4 * x, &value, 4);
      } else {
        std::memcpy(bytes.data() + 4 * x, &values[x], 4);
      }
    }
  }
}

attention_args aot_call::args() {
  const auto& d = p_.desc;
  const dtype t = d.element_type;
  const std::int64_t B = p_.batch, Lq = p_.query_length, Lk = p_.key_length, H = d.num_heads,
                     KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  attention_args a;
  a.q = make_tensor(q_.data(), t, {B, Lq, H, D});
  a.k = make_tensor(k_.data(), t, {B, Lk, KVH, D});
  a.v = make_tensor(v_.data(), t, {B, Lk, KVH, Dv});
  if (d.has_additive_mask()) {
    const auto shape = p_.mask_shape();
    if (shape.size() == 4) a.mask = make_tensor(mask_.data(), t, {shape[0], shape[1], shape[2], shape[3]});
    else if (shape.size() == 3) a.mask = make_tensor(mask_.data(), t, {shape[0], shape[1], shape[2]});
    else a.mask = make_tensor(mask_.data(), t, {shape[0], shape[1]});
  }
  if (d.has_key_padding_mask()) a.key_padding = make_tensor(p_.key_padding.data(), {B, Lk});
  if (d.has_sinks) a.sinks = make_tensor(p_.sinks.data(), {H});
  if (d.global_positions) a.positions = make_tensor(p_.positions, dtype::i32, {std::int64_t(global_position_count)});
  a.output = make_tensor(output_.data(), t, {B, Lq, H, Dv});
  if (d.lse_output) a.lse = make_tensor(lse_.data(), {B, H, Lq});
  for (int n = 0; n < d.captures.tensor_count; ++n) {
    const dtype type = d.captures.tensors[n].type == capture_type::i32 ? dtype::i32 : dtype::f32;
    a.captures[n] = dense_view(captures_[n].data(), type, p_.capture_shape(n));
  }
  for (std::size_t n = 0; n < p_.scalars.size(); ++n) a.scalars[n] = p_.scalars[n];
  return a;
}

std::vector<float> aot_call::output() const {
  return decode(p_.desc.element_type, output_.data(), p_.output_size());
}

void aot_call::poison_outputs(std::uint8_t byte) {
  std::fill(output_.begin(), output_.end(), byte);
  std::fill_n(reinterpret_cast<std::uint8_t*>(lse_.data()), lse_.size() * sizeof(float), byte);
}

bool aot_call::outputs_all_equal(std::uint8_t byte) const {
  const auto* lse_bytes = reinterpret_cast<const std::uint8_t*>(lse_.data());
  return std::all_of(output_.begin(), output_.end(), [&](std::uint8_t x) { return x == byte; }) &&
         std::all_of(lse_bytes, lse_bytes + lse_.size() * sizeof(float), [&](std::uint8_t x) { return x == byte; });
}

}  // namespace attngen::testing
