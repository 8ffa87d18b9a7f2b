#include "sequence_batch.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "support/dense_view.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

namespace {

constexpr float not_to_be_read = std::numeric_limits<float>::quiet_NaN();

// The description of one sequence's own problem: dense layouts, queries and keys in their element
// types (each problem's k and v are rounded to the KV element type separately).
attention_desc dense_view(attention_desc d) {
  d.queries = query_layout::dense;
  d.kv = kv_layout::dense;
  d.kv_page_size = attention_desc::unset;
  return d;
}

// Symmetric int8 quantisation of one (token, kv head) row: its scale, and the row replaced by its
// dequantised values.
float quantise_row(float* row, int n, std::int8_t* codes) {
  float largest = 0.0f;
  for (int x = 0; x < n; ++x) largest = std::max(largest, std::fabs(row[x]));
  const float scale = largest / 127.0f;
  for (int x = 0; x < n; ++x) {
    codes[x] = scale == 0.0f ? 0 : static_cast<std::int8_t>(std::lround(row[x] / scale));
    row[x] = scale * codes[x];
  }
  return scale;
}

// A KV tensor's bytes for `values` (tokens x kv heads x features) in the KV element type: int8
// codes with one scale per (token, kv head) into `scales`, and `values` set to what they decode to.
std::vector<std::uint8_t> cache_bytes(dtype type, std::vector<float>& values, int features, std::vector<float>& scales) {
  if (type != dtype::i8) return encode(type, values);
  std::vector<std::uint8_t> bytes(values.size());
  const std::size_t rows = values.size() / features;
  scales.resize(rows);
  for (std::size_t r = 0; r < rows; ++r)
    scales[r] = quantise_row(&values[r * features], features, reinterpret_cast<std::int8_t*>(&bytes[r * features]));
  return bytes;
}

std::int64_t product(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t(1), std::multiplies<>());
}

// Copies sequence `s`'s token rows [0, keys) (rows of `width` elements) into the cache `to`: dense
// rows b x capacity, or through the page table.
struct cache_writer {
  const sequence_batch& batch;
  int page_size;

  std::size_t row_of(int b, int token) const {
    if (page_size == 0) return std::size_t(b) * batch.key_capacity + token;
    const int page = batch.page_table[std::size_t(b) * batch.max_pages + token / page_size];
    return std::size_t(page) * page_size + token % page_size;
  }
};

}  // namespace

int sequence_batch::total_queries() const {
  int total = 0;
  for (const auto& s : sequences) total += s.query_length;
  return total;
}

sequence_batch make_sequence_batch(const attention_desc& desc, const std::vector<int>& query_lengths,
                                   const std::vector<int>& key_lengths, std::uint32_t seed) {
  for (int n = 0; n < desc.captures.tensor_count; ++n)
    for (int d = 0; d < desc.captures.tensors[n].rank; ++d) {
      const extent_kind kind = desc.captures.tensors[n].extents[d].kind;
      if (kind != extent_kind::heads && kind != extent_kind::fixed)
        throw std::invalid_argument("make_sequence_batch: captured tensors may have heads and fixed extents only");
    }
  sequence_batch s;
  s.desc = desc;
  const int B = int(query_lengths.size());
  const int H = desc.num_heads, KVH = desc.effective_kv_heads(), D = desc.qk_head_dim, Dv = desc.effective_v_head_dim();
  const dtype element = desc.element_type, kv_element = desc.effective_kv_element();
  std::mt19937 rng(seed);

  // Each sequence's own problem; the first shares its captured tensors and sinks with the rest.
  const attention_desc own = dense_view(desc);
  for (int b = 0; b < B; ++b) {
    attention_problem p = make_random_problem(own, 1, query_lengths[b], std::max(key_lengths[b], 1), seed + 7919u * b);
    if (key_lengths[b] == 0) {  // a sequence with no keys: its problem keeps none
      p.key_length = 0;
      p.k.clear();
      p.v.clear();
      p.mask.clear();
      p.key_padding.clear();
    }
    if (b > 0) {
      p.captures = s.sequences[0].captures;
      p.scalars = s.sequences[0].scalars;
    }
    for (float& x : p.k) x = kv_element == dtype::i8 ? x : round_to(kv_element, x);
    for (float& x : p.v) x = kv_element == dtype::i8 ? x : round_to(kv_element, x);
    s.sequences.push_back(std::move(p));
  }
  if (desc.has_sinks) {
    std::uniform_real_distribution<float> logits(-1.0f, 2.0f);
    for (int h = 0; h < H; ++h) s.sinks.push_back(logits(rng));
    for (auto& p : s.sequences) p.sinks = s.sinks;
  }
  // Integer captures as their int32 bits (the problem holds them as exact floats).
  s.captures = s.sequences.empty() ? std::vector<std::vector<float>>{} : s.sequences[0].captures;
  for (int n = 0; n < desc.captures.tensor_count; ++n)
    if (desc.captures.tensors[n].type == capture_type::i32)
      for (float& x : s.captures[n]) {
        const std::int32_t id = std::int32_t(x);
        std::memcpy(&x, &id, 4);
      }

  // Sequences 0 and 1 share their first page where both fill it: sequence 1's first page is a copy.
  const int page_size = desc.is_paged() ? desc.kv_page_size : 0;
  const bool shared_first_page = page_size > 0 && B >= 2 && key_lengths[0] >= page_size && key_lengths[1] >= page_size;
  if (shared_first_page) {
    const std::size_t k_row = std::size_t(KVH) * D, v_row = std::size_t(KVH) * Dv;
    std::copy_n(s.sequences[0].k.begin(), page_size * k_row, s.sequences[1].k.begin());
    std::copy_n(s.sequences[0].v.begin(), page_size * v_row, s.sequences[1].v.begin());
  }
  s.unquantised = s.sequences;

  // Queries: packed rows, or (B, Lq) dense.
  std::vector<float> q_values, mask_values;
  s.q_offsets.push_back(0);
  for (const auto& p : s.sequences) {
    q_values.insert(q_values.end(), p.q.begin(), p.q.end());
    s.q_offsets.push_back(s.q_offsets.back() + p.query_length);
  }
  s.q = encode(element, q_values);

  // The cache: capacity a little past the longest sequence, or pages for every sequence plus unused
  // ones, in shuffled order.
  const int longest = *std::max_element(key_lengths.begin(), key_lengths.end());
  if (page_size == 0) {
    // Keys without lengths are all of every sequence's.
    s.key_capacity = desc.has_kv_lengths() ? longest + 3 : longest;
  } else {
    s.max_pages = (longest + page_size - 1) / page_size + 1;
    s.key_capacity = s.max_pages * page_size;
    std::vector<int> needed(B);
    int pages = 0;
    for (int b = 0; b < B; ++b) pages += needed[b] = (key_lengths[b] + page_size - 1) / page_size;
    if (shared_first_page) --pages;
    s.num_pages = pages + 3;
    std::vector<int> order(s.num_pages);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    s.page_table.assign(std::size_t(B) * s.max_pages, -1);
    int next = 0;
    for (int b = 0; b < B; ++b)
      for (int p = 0; p < needed[b]; ++p)
        s.page_table[std::size_t(b) * s.max_pages + p] =
            (b == 1 && p == 0 && shared_first_page) ? s.page_table[0] : order[next++];
    // An entry past a sequence's pages is never read: one out of the pool's range says so.
    if (B > 0) s.page_table[std::size_t(s.max_pages) - 1] = s.num_pages + 1000;
  }
  const int token_rows = page_size == 0 ? B * s.key_capacity : s.num_pages * page_size;
  std::vector<float> k_values(std::size_t(token_rows) * KVH * D, not_to_be_read);
  std::vector<float> v_values(std::size_t(token_rows) * KVH * Dv, not_to_be_read);
  const cache_writer at{s, page_size};
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < key_lengths[b]; ++j) {
      const std::size_t row = at.row_of(b, j);
      std::copy_n(&s.sequences[b].k[std::size_t(j) * KVH * D], KVH * D, &k_values[row * KVH * D]);
      std::copy_n(&s.sequences[b].v[std::size_t(j) * KVH * Dv], KVH * Dv, &v_values[row * KVH * Dv]);
    }
  if (kv_element == dtype::i8) {
    // Unread rows quantise to code 0 with scale NaN; read, they would poison the output.
    for (float& x : k_values) x = std::isnan(x) ? 0.0f : x;
    for (float& x : v_values) x = std::isnan(x) ? 0.0f : x;
  }
  s.k = cache_bytes(kv_element, k_values, D, s.k_scale);
  s.v = cache_bytes(kv_element, v_values, Dv, s.v_scale);
  if (kv_element == dtype::i8) {
    // What the kernel reads: each sequence's values dequantised (a shared page's rows are one).
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < key_lengths[b]; ++j) {
        const std::size_t row = at.row_of(b, j);
        std::copy_n(&k_values[row * KVH * D], KVH * D, &s.sequences[b].k[std::size_t(j) * KVH * D]);
        std::copy_n(&v_values[row * KVH * Dv], KVH * Dv, &s.sequences[b].v[std::size_t(j) * KVH * Dv]);
      }
    std::vector<bool> used(std::size_t(token_rows), false);
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < key_lengths[b]; ++j) used[at.row_of(b, j)] = true;
    for (std::size_t row = 0; row < used.size(); ++row)
      if (!used[row])
        for (int g = 0; g < KVH; ++g) s.k_scale[row * KVH + g] = s.v_scale[row * KVH + g] = not_to_be_read;
  }
  if (desc.has_kv_lengths()) s.kv_lengths.assign(key_lengths.begin(), key_lengths.end());

  // Masks: each sequence's rows and keys at its place, NaN past its keys.
  const int total_q = int(s.q_offsets.back());
  if (desc.has_additive_mask()) {
    const bool per_head = desc.additive_mask_shape == mask_shape::h_lq_lk || desc.additive_mask_shape == mask_shape::b_h_lq_lk;
    const int heads = per_head ? H : 1;
    // Rows: (heads, total_q) packed, or (B, heads, Lq) dense: both index sequence b's row i of head
    // h as below.
    const int queries = desc.is_ragged() ? total_q : query_lengths.empty() ? 0 : query_lengths[0];
    const bool batched = !desc.is_ragged() && (desc.additive_mask_shape == mask_shape::b_h_lq_lk ||
                                               desc.additive_mask_shape == mask_shape::b_1_lq_lk);
    const int outer = batched ? B : 1;
    mask_values.assign(std::size_t(outer) * heads * queries * s.key_capacity, not_to_be_read);
    for (int b = 0; b < B; ++b) {
      const attention_problem& p = s.sequences[b];
      for (int h = 0; h < heads; ++h)
        for (int i = 0; i < p.query_length; ++i) {
          const int row = desc.is_ragged() ? s.q_offsets[b] + i : i;
          const std::size_t base = ((std::size_t(batched ? b : 0) * heads + h) * queries + row) * s.key_capacity;
          for (int j = 0; j < p.key_length; ++j)
            mask_values[base + j] = p.mask[(std::size_t(h) * p.query_length + i) * p.key_length + j];
        }
    }
    s.mask = encode(element, mask_values);
  }
  if (desc.has_key_padding_mask()) {
    s.key_padding.assign(std::size_t(B) * s.key_capacity, 0x5a);
    for (int b = 0; b < B; ++b)
      std::copy_n(s.sequences[b].key_padding.begin(), s.sequences[b].key_length,
                  s.key_padding.begin() + std::size_t(b) * s.key_capacity);
  }
  s.output.assign(std::size_t(total_q) * H * Dv * size_of(element), 0xcd);
  s.lse.assign(std::size_t(total_q) * H, -1234.5f);
  return s;
}

tensor_view sequence_batch::view(const kernel_argument& argument) {
  if (!argument.taken) return {};
  const int B = int(sequences.size()), H = desc.num_heads, KVH = desc.effective_kv_heads(), D = desc.qk_head_dim;
  const int Dv = desc.effective_v_head_dim();
  const int queries_per_sequence = B > 0 ? sequences[0].query_length : 0;
  const std::int64_t total_q = total_queries();
  const std::int64_t token_outer = desc.is_paged() ? num_pages : B;
  const std::int64_t token_inner = desc.is_paged() ? desc.kv_page_size : key_capacity;
  auto rows = [&](std::int64_t features) -> std::vector<std::int64_t> {
    if (desc.is_ragged()) return {total_q, H, features};
    return {B, queries_per_sequence, H, features};
  };
  switch (argument.slot) {
    case argument_slot::q: return dense_view(q.data(), argument.type, rows(D));
    case argument_slot::q_offsets: return dense_view(q_offsets.data(), dtype::i32, {B + 1});
    case argument_slot::k: return dense_view(k.data(), argument.type, {token_outer, token_inner, KVH, D});
    case argument_slot::v: return dense_view(v.data(), argument.type, {token_outer, token_inner, KVH, Dv});
    case argument_slot::k_scale: return dense_view(k_scale.data(), dtype::f32, {token_outer, token_inner, KVH});
    case argument_slot::v_scale: return dense_view(v_scale.data(), dtype::f32, {token_outer, token_inner, KVH});
    case argument_slot::page_table: return dense_view(page_table.data(), dtype::i32, {B, max_pages});
    case argument_slot::kv_lengths: return dense_view(kv_lengths.data(), dtype::i32, {B});
    case argument_slot::sinks: return dense_view(sinks.data(), dtype::f32, {H});
    case argument_slot::mask: {
      std::vector<std::int64_t> shape;
      for (int d = 0; d < argument.rank; ++d) {
        const argument_dim& dim = argument.dims[d];
        switch (dim.source) {
          case extent_source::batch: shape.push_back(B); break;
          case extent_source::query_length: shape.push_back(queries_per_sequence); break;
          case extent_source::total_queries: shape.push_back(total_q); break;
          case extent_source::key_length: case extent_source::max_pages: shape.push_back(key_capacity); break;
          default: shape.push_back(dim.extent); break;
        }
      }
      return dense_view(mask.data(), argument.type, shape);
    }
    case argument_slot::key_padding: return dense_view(key_padding.data(), dtype::u8, {B, key_capacity});
    case argument_slot::capture: {
      std::vector<std::int64_t> shape;
      for (int d = 0; d < argument.rank; ++d) shape.push_back(argument.dims[d].extent);
      return dense_view(captures[argument.index].data(), argument.type, shape);
    }
    // Scalars pass by value; global positions never come with sequence lengths (the DSL's rule
    // global_positions_dense).
    case argument_slot::scalars:
    case argument_slot::positions: return {};
    case argument_slot::output: return dense_view(output.data(), argument.type, rows(Dv));
    case argument_slot::lse:
      if (desc.is_ragged()) return dense_view(lse.data(), dtype::f32, {H, total_q});
      return dense_view(lse.data(), dtype::f32, {B, H, queries_per_sequence});
  }
  return {};
}

attention_args sequence_batch::args() {
  attention_args a;
  for (const kernel_argument& argument : argument_table(desc)) {
    const tensor_view t = view(argument);
    switch (argument.slot) {
      case argument_slot::q: a.q = t; break;
      case argument_slot::q_offsets: a.q_offsets = t; break;
      case argument_slot::k: a.k = t; break;
      case argument_slot::v: a.v = t; break;
      case argument_slot::k_scale: a.k_scale = t; break;
      case argument_slot::v_scale: a.v_scale = t; break;
      case argument_slot::page_table: a.page_table = t; break;
      case argument_slot::kv_lengths: a.kv_lengths = t; break;
      case argument_slot::sinks: a.sinks = t; break;
      case argument_slot::mask: a.mask = t; break;
      case argument_slot::key_padding: a.key_padding = t; break;
      case argument_slot::capture: a.captures[argument.index] = t; break;
      case argument_slot::scalars:
      case argument_slot::positions: break;
      case argument_slot::output: a.output = t; break;
      case argument_slot::lse: a.lse = t; break;
    }
  }
  for (int n = 0; n < desc.captures.scalar_count; ++n) a.scalars[n] = sequences[0].scalars[n];
  return a;
}

std::vector<float> sequence_batch::output_of(int b) const {
  const std::size_t row = std::size_t(desc.num_heads) * desc.effective_v_head_dim();
  const std::size_t first = std::size_t(q_offsets[b]) * row;
  return decode(desc.element_type, output.data() + first * size_of(desc.element_type),
                std::size_t(sequences[b].query_length) * row);
}

std::vector<float> sequence_batch::lse_of(int b) const {
  const int H = desc.num_heads, Lq = sequences[b].query_length;
  std::vector<float> rows(std::size_t(H) * Lq);
  const int total_q = total_queries();
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < Lq; ++i)
      rows[std::size_t(h) * Lq + i] = desc.is_ragged() ? lse[std::size_t(h) * total_q + q_offsets[b] + i]
                                                       : lse[(std::size_t(b) * H + h) * Lq + i];
  return rows;
}

std::string lengths_text(const std::vector<int>& query_lengths, const std::vector<int>& key_lengths) {
  auto list = [](const std::vector<int>& values) {
    std::string text;
    for (int v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
    return "{" + text + "}";
  };
  return "Lq " + list(query_lengths) + " Lk " + list(key_lengths);
}

}  // namespace attngen::testing
