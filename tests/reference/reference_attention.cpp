#include "reference_attention.hpp"

#include <cmath>
#include <limits>

#include "reference/reference_modifiers.hpp"

namespace attngen::testing {

namespace {

double mask_value(const attention_problem& p, int b, int h, int i, int j) {
  const std::size_t Lq = p.query_length, Lk = p.key_length, H = p.desc.num_heads;
  switch (p.desc.additive_mask_shape) {
    case mask_shape::lq_lk: return p.mask[i * Lk + j];
    case mask_shape::h_lq_lk: return p.mask[(h * Lq + i) * Lk + j];
    case mask_shape::b_h_lq_lk: return p.mask[((b * H + h) * Lq + i) * Lk + j];
    case mask_shape::b_1_lq_lk: return p.mask[(b * Lq + i) * Lk + j];
    case mask_shape::none: break;
  }
  return 0.0;
}

bool key_visible(const attention_problem& p, int b, int h, int i, int j) {
  const auto& d = p.desc;
  if (d.has_mask_mod() && evaluate_modifier(d.mask_modifier, p, {0.0, b, h, i, j}) == 0) return false;
  // Positions in the whole sequence (the call's own without global positions).
  const int query = p.query_start() + i, key = p.key_start() + j;
  if (d.causal_mode == causal_alignment::top_left && key > query) return false;
  if (d.causal_mode == causal_alignment::bottom_right && key > query + (p.key_total() - p.query_total())) return false;
  if (d.has_key_padding_mask()) {
    const bool flag = p.key_padding[std::size_t(b) * p.key_length + j] != 0;
    if (flag == (d.key_padding == padding_polarity::true_means_ignore)) return false;
  }
  return true;
}

}  // namespace

reference_row reference_scores(const attention_problem& p, int b, int h, int i) {
  const auto& d = p.desc;
  const int Lq = p.query_length, Lk = p.key_length;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim;
  const int g = h / (H / KVH);
  const double scale = d.has_scale ? double(d.scale_value) : 1.0 / std::sqrt(double(D));
  const double minus_inf = -std::numeric_limits<double>::infinity();
  reference_row row{std::vector<double>(Lk, minus_inf), std::vector<double>(Lk, 0.0)};
  for (int j = 0; j < Lk; ++j) {
    const double bias = d.has_additive_mask() ? mask_value(p, b, h, i, j) : 0.0;
    if (!key_visible(p, b, h, i, j) || bias <= mask_out_threshold) continue;
    double dot = 0.0;
    for (int x = 0; x < D; ++x)
      dot += double(p.q[((std::size_t(b) * Lq + i) * H + h) * D + x]) * double(p.k[((std::size_t(b) * Lk + j) * KVH + g) * D + x]);
    row.scaled_dot[j] = dot * scale;
    double s = row.scaled_dot[j];
    if (d.has_score_mod()) s = evaluate_modifier(d.score_modifier, p, {s, b, h, i, j});
    row.score[j] = s <= mask_out_threshold ? minus_inf : s + bias;  // a modifier's -inf masks the key
  }
  return row;
}

reference_result reference_attention(const attention_problem& p) {
  const auto& d = p.desc;
  const int B = p.batch, Lq = p.query_length, Lk = p.key_length;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), Dv = d.effective_v_head_dim();
  const int group = H / KVH;
  const double minus_inf = -std::numeric_limits<double>::infinity();

  reference_result r;
  r.output.assign(p.output_size(), 0.0);
  r.lse.assign(p.lse_size(), minus_inf);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int g = h / group;
      for (int i = 0; i < Lq; ++i) {
        std::vector<double> scores = reference_scores(p, b, h, i).score;
        double row_max = minus_inf;
        for (int j = 0; j < Lk; ++j)
          if (std::isnan(scores[j]) || scores[j] > row_max) row_max = scores[j];  // a NaN maximum stays NaN
        // A sink's logit joins the row's maximum and denominator, and attends to nothing.
        const double sink = d.has_sinks ? double(p.sinks[h]) : minus_inf;
        if (!std::isnan(row_max) && sink > row_max) row_max = sink;
        if (row_max == minus_inf) continue;  // fully masked: output 0, lse -inf
        double sum = d.has_sinks ? std::exp(sink - row_max) : 0.0;
        for (int j = 0; j < Lk; ++j) {
          scores[j] = scores[j] == minus_inf ? 0.0 : std::exp(scores[j] - row_max);
          sum += scores[j];
        }
        double* out = &r.output[((std::size_t(b) * Lq + i) * H + h) * Dv];
        for (int j = 0; j < Lk; ++j) {
          if (scores[j] == 0.0 && !std::isnan(scores[j])) continue;
          for (int x = 0; x < Dv; ++x)
            out[x] += scores[j] / sum * double(p.v[((std::size_t(b) * Lk + j) * KVH + g) * Dv + x]);
        }
        r.lse[(std::size_t(b) * H + h) * Lq + i] = row_max + std::log(sum);
      }
    }
  return r;
}

}  // namespace attngen::testing
