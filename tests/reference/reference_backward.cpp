#include "reference/reference_backward.hpp"

#include <cmath>
#include <limits>

#include "reference/reference_attention.hpp"
#include "reference/reference_modifiers.hpp"

namespace attngen::testing {

reference_gradients reference_attention_backward(const attention_problem& p, const std::vector<float>& d_output) {
  const auto& d = p.desc;
  const int B = p.batch, Lq = p.query_length, Lk = p.key_length;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  const int group = H / KVH;
  const double scale = d.has_scale ? double(d.scale_value) : 1.0 / std::sqrt(double(D));
  const double minus_inf = -std::numeric_limits<double>::infinity();
  auto q_at = [&](int b, int i, int h, int x) { return double(p.q[((std::size_t(b) * Lq + i) * H + h) * D + x]); };
  auto k_at = [&](int b, int j, int g, int x) { return double(p.k[((std::size_t(b) * Lk + j) * KVH + g) * D + x]); };
  auto v_at = [&](int b, int j, int g, int x) { return double(p.v[((std::size_t(b) * Lk + j) * KVH + g) * Dv + x]); };
  auto do_at = [&](int b, int i, int h, int x) { return double(d_output[((std::size_t(b) * Lq + i) * H + h) * Dv + x]); };

  reference_gradients r;
  r.dq.assign(std::size_t(B) * Lq * H * D, 0.0);
  r.dk.assign(std::size_t(B) * Lk * KVH * D, 0.0);
  r.dv.assign(std::size_t(B) * Lk * KVH * Dv, 0.0);
  if (d.has_sinks) r.d_sinks.assign(H, 0.0);
  r.d_captures.resize(std::size_t(d.captures.tensor_count));
  for (int n = 0; n < d.captures.tensor_count; ++n)
    if (d.capture_has_gradient(n)) r.d_captures[std::size_t(n)].assign(p.captures[std::size_t(n)].size(), 0.0);
  r.d_scalars.assign(std::size_t(d.captures.scalar_count), 0.0);
  std::vector<double> weights(Lk), output(Dv);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int g = h / group;
      for (int i = 0; i < Lq; ++i) {
        const reference_row row = reference_scores(p, b, h, i);
        double row_max = d.has_sinks ? double(p.sinks[h]) : minus_inf;
        for (int j = 0; j < Lk; ++j) row_max = std::max(row_max, row.score[j]);
        if (row_max == minus_inf) continue;  // fully masked: no gradient
        double sum = d.has_sinks ? std::exp(double(p.sinks[h]) - row_max) : 0.0;
        for (int j = 0; j < Lk; ++j) sum += weights[j] = row.score[j] == minus_inf ? 0.0 : std::exp(row.score[j] - row_max);
        for (int j = 0; j < Lk; ++j) weights[j] /= sum;
        // delta = dO . O, with O recomputed here.
        std::fill(output.begin(), output.end(), 0.0);
        for (int j = 0; j < Lk; ++j)
          for (int x = 0; x < Dv; ++x) output[x] += weights[j] * v_at(b, j, g, x);
        double delta = 0.0;
        for (int x = 0; x < Dv; ++x) delta += do_at(b, i, h, x) * output[x];
        if (d.has_sinks) r.d_sinks[h] -= std::exp(double(p.sinks[h]) - row_max) / sum * delta;
        for (int j = 0; j < Lk; ++j) {
          if (weights[j] == 0.0) continue;
          double value_gradient = 0.0;
          for (int x = 0; x < Dv; ++x) {
            r.dv[((std::size_t(b) * Lk + j) * KVH + g) * Dv + x] += weights[j] * do_at(b, i, h, x);
            value_gradient += do_at(b, i, h, x) * v_at(b, j, g, x);
          }
          double score_gradient = weights[j] * (value_gradient - delta);
          if (d.has_score_mod()) {
            const modifier_point at{row.scaled_dot[j], b, h, i, j};
            for (const capture_read_derivative& read : modifier_capture_derivatives(d.score_modifier, p, at)) {
              if (read.scalar) r.d_scalars[std::size_t(read.capture)] += score_gradient * read.derivative;
              else r.d_captures[std::size_t(read.capture)][read.offset] += score_gradient * read.derivative;
            }
            score_gradient *= modifier_score_derivative(d.score_modifier, p, at);
          }
          for (int x = 0; x < D; ++x) {
            r.dq[((std::size_t(b) * Lq + i) * H + h) * D + x] += scale * score_gradient * k_at(b, j, g, x);
            r.dk[((std::size_t(b) * Lk + j) * KVH + g) * D + x] += scale * score_gradient * q_at(b, i, h, x);
          }
        }
      }
    }
  return r;
}

}  // namespace attngen::testing
