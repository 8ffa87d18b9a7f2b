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

std::vector<int> attention_problem::capture_shape(int n) const {
  const tensor_capture& t = desc.captures.tensors[n];
  std::vector<int> shape;
  for (int d = 0; d < t.rank; ++d) {
    switch (t.extents[d].kind) {
      case extent_kind::batch: shape.push_back(batch); break;
      case extent_kind::heads: shape.push_back(desc.num_heads); break;
      case extent_kind::query_length: shape.push_back(query_total()); break;
      case extent_kind::key_length: shape.push_back(key_total()); break;
      case extent_kind::fixed: shape.push_back(t.extents[d].size); break;
    }
  }
  return shape;
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
  if (desc.has_sinks) n += " sinks";
  if (desc.global_positions)
    n += " positions=" + std::to_string(query_start()) + "," + std::to_string(key_start()) + "/" +
         std::to_string(query_total()) + "," + std::to_string(key_total());
  if (desc.has_score_mod()) n += " score_mod=" + to_text(desc.score_modifier);
  if (desc.has_mask_mod()) n += " mask_mod=" + to_text(desc.mask_modifier);
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
  if (desc.global_positions) {
    const int query_extra = int(rng() % unsigned(query_length + 40)), key_extra = int(rng() % unsigned(key_length + 40));
    p.positions[int(global_position::query_start)] = int(rng() % unsigned(query_extra + 1));
    p.positions[int(global_position::key_start)] = int(rng() % unsigned(key_extra + 1));
    p.positions[int(global_position::query_total)] = query_length + query_extra;
    p.positions[int(global_position::key_total)] = key_length + key_extra;
  }
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
  // Integer tensors hold small ids that never decrease along their last dimension (documents of a
  // packed sequence, prefix lengths); float tensors uniform values; scalars lie in [1, 4).
  for (int n = 0; n < desc.captures.tensor_count; ++n) {
    const std::vector<int> shape = p.capture_shape(n);
    std::size_t count = 1;
    for (int extent : shape) count *= std::size_t(extent);
    std::vector<float>& values = p.captures.emplace_back(count);
    if (desc.captures.tensors[n].type == capture_type::f32) {
      for (auto& x : values) x = uniform(rng);
      continue;
    }
    // About four changes of id per row, so long rows have documents longer than a key block.
    const std::size_t row = std::size_t(shape.back());
    for (std::size_t start = 0; start < count; start += row) {
      int id = int(rng() % 3u);
      for (std::size_t x = 0; x < row; ++x) {
        if (rng() % (row / 4 + 1) == 0) id += 1 + int(rng() % 2u);
        values[start + x] = float(id);
      }
    }
  }
  for (int n = 0; n < desc.captures.scalar_count; ++n) p.scalars.push_back(2.5f + 1.5f * uniform(rng));
  // Sinks near the scores' range, so that they matter without dominating.
  if (desc.has_sinks)
    for (int h = 0; h < desc.num_heads; ++h) p.sinks.push_back(0.5f + 1.5f * uniform(rng));
  return p;
}

std::vector<float> rows_of(const std::vector<float>& values, const std::vector<std::int64_t>& shape, int dim,
                           const std::vector<row_run>& runs) {
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[std::size_t(d)];
  for (std::size_t d = std::size_t(dim) + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<float> out;
  for (std::int64_t o = 0; o < outer; ++o)
    for (const row_run& r : runs) {
      const auto first = values.begin() + std::ptrdiff_t((o * shape[std::size_t(dim)] + r.start) * inner);
      out.insert(out.end(), first, first + std::ptrdiff_t(r.length * inner));
    }
  return out;
}

attention_problem make_whole_problem(const attention_desc& desc, int batch, int query_length, int key_length,
                                     std::uint32_t seed) {
  attention_desc local = desc;
  local.global_positions = false;
  attention_problem p = make_random_problem(local, batch, query_length, key_length, seed);
  p.desc = desc;
  p.positions[int(global_position::query_total)] = query_length;
  p.positions[int(global_position::key_total)] = key_length;
  return p;
}

attention_problem slice_of(const attention_problem& whole, int query_start, int query_count, int key_start,
                           int key_count) {
  attention_problem p = whole;
  p.query_length = query_count;
  p.key_length = key_count;
  p.positions[int(global_position::query_start)] = whole.query_start() + query_start;
  p.positions[int(global_position::key_start)] = whole.key_start() + key_start;
  const attention_desc& d = whole.desc;
  const std::size_t H = d.num_heads, KVH = d.effective_kv_heads();
  const std::vector<row_run> queries = {{query_start, query_count}}, keys = {{key_start, key_count}};
  const std::int64_t B = whole.batch, Lq = whole.query_length, Lk = whole.key_length;
  p.q = rows_of(whole.q, {B, Lq, std::int64_t(H), d.qk_head_dim}, 1, queries);
  p.k = rows_of(whole.k, {B, Lk, std::int64_t(KVH), d.qk_head_dim}, 1, keys);
  p.v = rows_of(whole.v, {B, Lk, std::int64_t(KVH), d.effective_v_head_dim()}, 1, keys);
  if (d.has_additive_mask()) {
    const std::vector<int> mask_shape = whole.mask_shape();
    std::vector<std::int64_t> shape(mask_shape.begin(), mask_shape.end());
    const int rows_at = int(shape.size()) - 2;
    const std::vector<float> rows = rows_of(whole.mask, shape, rows_at, queries);
    shape[std::size_t(rows_at)] = query_count;
    p.mask = rows_of(rows, shape, rows_at + 1, keys);
  }
  if (d.has_key_padding_mask()) {
    const std::vector<float> flags(whole.key_padding.begin(), whole.key_padding.end());
    const std::vector<float> cut = rows_of(flags, {B, Lk}, 1, keys);
    p.key_padding.assign(cut.begin(), cut.end());
  }
  return p;
}

std::vector<float> make_random_output_gradient(const attention_problem& p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> gradient(p.output_size());
  for (float& x : gradient) x = round_to(p.desc.element_type, uniform(rng));
  return gradient;
}

}  // namespace attngen::testing
