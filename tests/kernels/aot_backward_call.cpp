#include "kernels/aot_backward_call.hpp"

#include <algorithm>
#include <iterator>

#include "support/dense_view.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

aot_backward_call::aot_backward_call(const attention_problem& p, aot_call& forward, const std::vector<float>& d_output)
    : p_(p), forward_(forward) {
  const dtype t = p.desc.element_type;
  d_output_ = encode(t, d_output);
  dq_.assign(p.q.size() * size_of(t), 0);
  dk_.assign(p.k.size() * size_of(t), 0);
  dv_.assign(p.v.size() * size_of(t), 0);
  d_sinks_.assign(p.sinks.size(), 0.0f);
  d_captures_.resize(p.captures.size());
  for (std::size_t n = 0; n < p.captures.size(); ++n)
    if (p.desc.capture_has_gradient(int(n))) d_captures_[n].assign(p.captures[n].size(), 0.0f);
  if (p.desc.scalars_have_gradient()) d_scalars_.assign(p.scalars.size(), 0.0f);
}

attention_backward_args aot_backward_call::args() {
  const attention_desc& d = p_.desc;
  const dtype t = d.element_type;
  const attention_args a = forward_.args();
  const std::int64_t B = p_.batch, Lq = p_.query_length, Lk = p_.key_length, H = d.num_heads,
                     KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  attention_backward_args b;
  b.q = a.q;
  b.k = a.k;
  b.v = a.v;
  b.sinks = a.sinks;
  b.mask = a.mask;
  b.key_padding = a.key_padding;
  std::copy(std::begin(a.captures), std::end(a.captures), std::begin(b.captures));
  std::copy(std::begin(a.scalars), std::end(a.scalars), std::begin(b.scalars));
  b.output = a.output;
  b.lse = a.lse;
  b.d_output = make_tensor(d_output_.data(), t, {B, Lq, H, Dv});
  b.dq = make_tensor(dq_.data(), t, {B, Lq, H, D});
  b.dk = make_tensor(dk_.data(), t, {B, Lk, KVH, D});
  b.dv = make_tensor(dv_.data(), t, {B, Lk, KVH, Dv});
  if (d.has_sinks) b.d_sinks = make_tensor(d_sinks_.data(), {H});
  for (std::size_t n = 0; n < d_captures_.size(); ++n)
    if (!d_captures_[n].empty()) b.d_captures[n] = dense_view(d_captures_[n].data(), dtype::f32, p_.capture_shape(int(n)));
  if (!d_scalars_.empty()) b.d_scalars = make_tensor(d_scalars_.data(), {std::int64_t(d_scalars_.size())});
  return b;
}

void aot_backward_call::fill_gradients(float value) {
  const dtype t = p_.desc.element_type;
  dq_ = encode(t, std::vector<float>(p_.q.size(), value));
  dk_ = encode(t, std::vector<float>(p_.k.size(), value));
  dv_ = encode(t, std::vector<float>(p_.v.size(), value));
  std::fill(d_sinks_.begin(), d_sinks_.end(), value);
  std::fill(d_scalars_.begin(), d_scalars_.end(), value);
  for (auto& gradient : d_captures_) std::fill(gradient.begin(), gradient.end(), value);
}

std::vector<float> aot_backward_call::dq() const { return decode(p_.desc.element_type, dq_.data(), p_.q.size()); }
std::vector<float> aot_backward_call::dk() const { return decode(p_.desc.element_type, dk_.data(), p_.k.size()); }
std::vector<float> aot_backward_call::dv() const { return decode(p_.desc.element_type, dv_.data(), p_.v.size()); }

}  // namespace attngen::testing
