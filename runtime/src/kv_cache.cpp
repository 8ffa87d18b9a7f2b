#include "attngen/runtime/kv_cache.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "element_access.hpp"
#include "sequence_checks.hpp"
#include "tensor_checks.hpp"

namespace attngen {

using detail::element_address;
using detail::load;
using detail::store;

namespace {

using detail::expected_dim;
using detail::fail;

// One tensor of the call: its name in messages, whether the description's cache takes it (and the
// feature that would take it), and whether append_kv reads it, writes it, or both.
struct append_tensor {
  const char* name;
  const tensor_view& view;
  bool taken;
  const char* feature;
  bool read, written;
};

// Every tensor of the call, in the order they are checked.
std::vector<append_tensor> tensors_of(const attention_desc& desc, const kv_append_args& a) {
  const bool scales = desc.has_kv_scales(), paged = desc.is_paged();
  return {{"kv_lengths", a.kv_lengths, true, "", true, true},
          {"new_offsets", a.new_offsets, true, "", true, false},
          {"k", a.k, true, "", true, false},
          {"v", a.v, true, "", true, false},
          {"k_cache", a.k_cache, true, "", false, true},
          {"v_cache", a.v_cache, true, "", false, true},
          {"k_scale", a.k_scale, scales, "int8 keys and values", false, true},
          {"v_scale", a.v_scale, scales, "int8 keys and values", false, true},
          {"page_table", a.page_table, paged, "paged KV cache", true, false}};
}

// "paged (page_size 16) i8 cache", "kv_lengths f16 cache": the cache a description reads, for messages.
std::string cache_text(const attention_desc& desc) {
  const std::string layout =
      desc.is_paged() ? "paged (page_size " + std::to_string(desc.kv_page_size) + ")" : "kv_lengths";
  return layout + " " + std::string(name_of(desc.effective_kv_element())) + " cache";
}

status check_description(const attention_desc& desc) {
  if (!desc.has_kv_lengths())
    return fail(error_code::unexpected_tensor, "desc",
                "the kv layout is dense (every sequence has Lk keys, no kv_lengths), so there is no end to append "
                "at; describe the cache with kv_lengths() or paged_kv(page_size)");
  const dtype element = desc.effective_kv_element();
  if (element != dtype::f32 && element != dtype::f16 && element != dtype::bf16 && element != dtype::i8)
    return fail(error_code::wrong_dtype, "desc",
                "the kv element type " + std::string(name_of(element)) + " is not a cache's (f32, f16, bf16 or i8)");
  return {};
}

// Each tensor given when taken and only then, on the host, and writable when written.
status check_presence_and_place(const attention_desc& desc, const std::vector<append_tensor>& tensors) {
  for (const append_tensor& t : tensors) {
    if (t.taken && t.view.empty())
      return fail(error_code::null_pointer, t.name, "not given; append_kv takes it for a " + cache_text(desc));
    if (status s = detail::check_presence({t.name, t.view, t.taken, t.feature}); !s) return s;
    if (t.view.empty()) continue;
    if (status s = detail::check_on_host(t.name, t.view, "append_kv writes the cache on the host and takes host tensors only");
        !s)
      return s;
    if (t.written)
      if (status s = detail::check_writable(t.name, t.view); !s) return s;
  }
  return {};
}

// k and v: any of the float element types, converted as they are stored.
status check_new_rows(const char* name, const tensor_view& t, const char* dims_text,
                      const std::vector<expected_dim>& dims) {
  if (status s = detail::check_float_element(name, t); !s) return s;
  return detail::check_layout(name, t, t.type, dims_text, dims, true);
}

// The dimensions that place a token in the cache, (B, Lk) or paged (num_pages, page_size), followed by
// `inner`: k_cache sets Lk and num_pages, the other cache tensors follow it.
std::vector<expected_dim> cache_dims(const attention_desc& desc, const kv_append_args& a, bool is_k_cache,
                                     std::initializer_list<expected_dim> inner) {
  const char* from = is_k_cache ? "" : "k_cache";
  std::vector<expected_dim> dims;
  if (desc.is_paged())
    dims = {{"pages", a.k_cache.shape[0], from, true}, {"page_size", desc.kv_page_size}};
  else
    dims = {{"batch", a.kv_lengths.shape[0], "kv_lengths"}, {"Lk", a.k_cache.shape[1], from}};
  dims.insert(dims.end(), inner);
  return dims;
}

// Element types, ranks and extents against the contract (B from kv_lengths, total_new from k).
status check_layouts(const attention_desc& desc, const kv_append_args& a) {
  using detail::check_layout;
  const std::int64_t batch = a.kv_lengths.shape[0];
  const expected_dim kv_heads{"kv heads", desc.effective_kv_heads(), "", true};
  const expected_dim head_dim{"head_dim", desc.qk_head_dim}, v_head_dim{"v head_dim", desc.effective_v_head_dim()};
  const bool paged = desc.is_paged();
  if (status s = check_layout("kv_lengths", a.kv_lengths, dtype::i32, "(B)", {{"batch", batch}}); !s) return s;
  if (status s = check_layout("new_offsets", a.new_offsets, dtype::i32, "(B + 1)",
                              {{"entries (B + 1)", batch + 1, "kv_lengths", true}});
      !s)
    return s;
  const std::int64_t total_new = a.k.shape[0];
  if (status s = check_new_rows("k", a.k, "(total_new, KVH, D)", {{"total_new", total_new}, kv_heads, head_dim}); !s)
    return s;
  if (status s = check_new_rows("v", a.v, "(total_new, KVH, Dv)",
                                {{"total_new", total_new, "k"}, kv_heads, v_head_dim});
      !s)
    return s;
  const dtype element = desc.effective_kv_element();
  const char* k_cache_dims = paged ? "(num_pages, page_size, KVH, D)" : "(B, Lk, KVH, D)";
  const char* v_cache_dims = paged ? "(num_pages, page_size, KVH, Dv)" : "(B, Lk, KVH, Dv)";
  if (status s = check_layout("k_cache", a.k_cache, element, k_cache_dims,
                              cache_dims(desc, a, true, {kv_heads, head_dim}), true);
      !s)
    return s;
  if (status s = check_layout("v_cache", a.v_cache, element, v_cache_dims,
                              cache_dims(desc, a, false, {kv_heads, v_head_dim}), true);
      !s)
    return s;
  if (desc.has_kv_scales()) {
    const char* scale_dims = paged ? "(num_pages, page_size, KVH)" : "(B, Lk, KVH)";
    for (const auto& [name, view] : {std::pair{"k_scale", a.k_scale}, std::pair{"v_scale", a.v_scale}})
      if (status s = check_layout(name, view, dtype::f32, scale_dims, cache_dims(desc, a, false, {kv_heads}), true); !s)
        return s;
  }
  if (paged)
    return check_layout("page_table", a.page_table, dtype::i32, "(B, max_pages)",
                        {{"batch", batch, "kv_lengths"}, {"pages per sequence", a.page_table.shape[1], "", true}});
  return {};
}

// A written tensor must give each element its own address, and must not overlap what append_kv reads
// (it would read what it has written). The caches may share an allocation: append_kv reads none of them.
status check_memory(const std::vector<append_tensor>& tensors) {
  for (const append_tensor& t : tensors)
    if (t.written && t.taken)
      if (status s = detail::check_distinct_elements(t.name, t.view); !s) return s;
  for (const append_tensor& written : tensors) {
    if (!written.written) continue;
    for (const append_tensor& other : tensors)
      if (&other != &written && other.read && detail::overlap(written.view, other.view))
        return fail(error_code::wrong_shape, written.name,
                    std::string("overlaps ") + other.name + " in memory; append_kv reads " + other.name +
                        " while it writes " + written.name);
  }
  return {};
}

using detail::sequence_cut::element;
using detail::sequence_cut::page_entry;

std::int64_t new_rows_of(const kv_append_args& a, std::int64_t b) {
  return element(a.new_offsets, b + 1) - element(a.new_offsets, b);
}

status check_new_offsets(const kv_append_args& a) {
  const std::int64_t total = a.k.shape[0];
  return detail::check_offsets("new_offsets", a.new_offsets, a.kv_lengths.shape[0], total,
                               "total_new (" + std::to_string(total) + ", the rows of k)");
}

// The keys a sequence's cache holds: Lk, or its page table row's pages.
std::int64_t key_capacity(const attention_desc& desc, const kv_append_args& a) {
  return desc.is_paged() ? a.page_table.shape[1] * desc.kv_page_size : a.k_cache.shape[1];
}

status check_capacity(const attention_desc& desc, const kv_append_args& a) {
  const std::int64_t capacity = key_capacity(desc, a);
  const std::string capacity_text =
      std::to_string(capacity) + (desc.is_paged() ? " keys its page table row holds (max_pages x page_size)" : " (Lk)");
  for (std::int64_t b = 0; b < a.kv_lengths.shape[0]; ++b) {
    const std::int64_t held = element(a.kv_lengths, b), added = new_rows_of(a, b);
    const std::string held_text = "kv_lengths[" + std::to_string(b) + "] = " + std::to_string(held);
    if (held < 0 || held > capacity)
      return fail(error_code::wrong_shape, "kv_lengths", held_text + " is outside 0 to " + capacity_text);
    if (held + added > capacity)
      return fail(error_code::wrong_shape, "kv_lengths",
                  held_text + " and sequence " + std::to_string(b) + "'s " + std::to_string(added) +
                      " new rows make " + std::to_string(held + added) + " keys, more than its capacity, " +
                      capacity_text);
  }
  return {};
}

// "key 8", "keys 8 to 9".
std::string keys_text(std::int64_t first, std::int64_t last) {
  if (first == last) return "key " + std::to_string(first);
  return "keys " + std::to_string(first) + " to " + std::to_string(last);
}

// Each page a new row lands in is in the pool (entries past the new rows' last page are not read).
status check_pages(const attention_desc& desc, const kv_append_args& a) {
  const std::int64_t pages = a.k_cache.shape[0], page_size = desc.kv_page_size;
  for (std::int64_t b = 0; b < a.kv_lengths.shape[0]; ++b) {
    const std::int64_t added = new_rows_of(a, b);
    if (added == 0) continue;
    const std::int64_t first_key = element(a.kv_lengths, b), last_key = first_key + added - 1;
    for (std::int64_t p = first_key / page_size; p <= last_key / page_size; ++p) {
      const std::int64_t page = page_entry(a.page_table, b, p);
      if (page < 0 || page >= pages)
        return fail(error_code::wrong_shape, "page_table",
                    "page_table[" + std::to_string(b) + "][" + std::to_string(p) + "] = " + std::to_string(page) +
                        " is outside the pool's pages 0 to " + std::to_string(pages - 1) + ", but sequence " +
                        std::to_string(b) + "'s new " +
                        keys_text(std::max(first_key, p * page_size), std::min(last_key, (p + 1) * page_size - 1)) +
                        " go to that page");
    }
  }
  return {};
}

// One new row: row `source` of k and v becomes key `key` of sequence `sequence`, stored at (outer,
// inner) of the caches: (sequence, key) dense, (page, row in page) paged.
struct appended_row {
  std::int64_t source, sequence, key, outer, inner;
};

// Where every new row goes, from checked arguments.
std::vector<appended_row> destinations(const attention_desc& desc, const kv_append_args& a) {
  std::vector<appended_row> rows;
  for (std::int64_t b = 0; b < a.kv_lengths.shape[0]; ++b) {
    const std::int64_t held = element(a.kv_lengths, b), first = element(a.new_offsets, b);
    for (std::int64_t r = 0; r < new_rows_of(a, b); ++r) {
      const std::int64_t key = held + r;
      if (desc.is_paged())
        rows.push_back({first + r, b, key, page_entry(a.page_table, b, key / desc.kv_page_size), key % desc.kv_page_size});
      else
        rows.push_back({first + r, b, key, b, key});
    }
  }
  return rows;
}

// Paged caches only (a dense cache gives each sequence its own rows): no cache row receives two new
// rows, which shared pages, or a page listed twice, could make happen.
status check_rows_distinct(const attention_desc& desc, std::vector<appended_row> rows) {
  std::sort(rows.begin(), rows.end(), [](const appended_row& x, const appended_row& y) {
    return std::tie(x.outer, x.inner, x.source) < std::tie(y.outer, y.inner, y.source);
  });
  const auto clash = std::adjacent_find(rows.begin(), rows.end(), [](const appended_row& x, const appended_row& y) {
    return x.outer == y.outer && x.inner == y.inner;
  });
  if (clash == rows.end()) return {};
  const appended_row &first = clash[0], &second = clash[1];
  const auto table_entry = [&desc](const appended_row& r) {
    return "page_table[" + std::to_string(r.sequence) + "][" + std::to_string(r.key / desc.kv_page_size) + "]";
  };
  const auto key_text = [](const appended_row& r) {
    return "sequence " + std::to_string(r.sequence) + "'s key " + std::to_string(r.key);
  };
  return fail(error_code::wrong_shape, "page_table",
              table_entry(first) + " and " + table_entry(second) + " are both page " + std::to_string(first.outer) +
                  ": " + key_text(first) + " and " + key_text(second) + " would both be written to its row " +
                  std::to_string(first.inner));
}

// The integer nearest value / scale (in double, so that ties are decided on the exact quotient), clamped
// so that a non-finite value stores a defined integer.
std::int8_t quantise(float value, float scale) {
  const double q = std::round(double(value) / scale);
  return std::int8_t(std::fmin(std::fmax(q, -127.0), 127.0));
}

// Symmetric int8 with one scale per row: the largest magnitude maps to +-127.
void store_quantised(const std::vector<float>& values, std::uint8_t* out, float* scale_out) {
  float largest = 0.0f;
  for (float x : values) largest = std::max(largest, std::fabs(x));
  const float scale = largest / 127.0f;
  for (std::size_t e = 0; e < values.size(); ++e) {
    const std::int8_t q = scale == 0.0f ? 0 : quantise(values[e], scale);
    std::memcpy(out + e, &q, 1);
  }
  std::memcpy(scale_out, &scale, sizeof scale);
}

// Converts each new row of `source` (k or v) into `cache` (and `scales` for an i8 cache).
void append_rows(const tensor_view& source, const tensor_view& cache, const tensor_view& scales,
                 const std::vector<appended_row>& rows) {
  const std::int64_t heads = source.shape[1], width = source.shape[2];
  std::vector<float> values(width);
  for (const appended_row& row : rows) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::uint8_t* from = element_address(source, row.source * source.strides[0] + h * source.strides[1]);
      for (std::int64_t e = 0; e < width; ++e) values[e] = load(source.type, from + e * size_of(source.type));
      std::uint8_t* to =
          element_address(cache, row.outer * cache.strides[0] + row.inner * cache.strides[1] + h * cache.strides[2]);
      if (cache.type == dtype::i8) {
        const std::int64_t scale_offset =
            row.outer * scales.strides[0] + row.inner * scales.strides[1] + h * scales.strides[2];
        store_quantised(values, to, reinterpret_cast<float*>(element_address(scales, scale_offset)));
      } else {
        for (std::int64_t e = 0; e < width; ++e) store(cache.type, values[e], to + e * size_of(cache.type));
      }
    }
  }
}

void advance_lengths(const kv_append_args& a) {
  auto* lengths = static_cast<std::int32_t*>(a.kv_lengths.data);
  for (std::int64_t b = 0; b < a.kv_lengths.shape[0]; ++b)
    lengths[b * a.kv_lengths.strides[0]] += std::int32_t(new_rows_of(a, b));
}

// The checks of the contract up to the rows' destinations, in order; the first problem found.
status check_arguments(const attention_desc& desc, const kv_append_args& args) {
  if (status s = check_description(desc); !s) return s;
  const std::vector<append_tensor> tensors = tensors_of(desc, args);
  if (status s = check_presence_and_place(desc, tensors); !s) return s;
  if (status s = check_layouts(desc, args); !s) return s;
  if (status s = check_memory(tensors); !s) return s;
  if (status s = check_new_offsets(args); !s) return s;
  if (status s = check_capacity(desc, args); !s) return s;
  if (desc.is_paged())
    if (status s = check_pages(desc, args); !s) return s;
  return {};
}

}  // namespace

status append_kv(const attention_desc& desc, const kv_append_args& args) {
  if (status s = check_arguments(desc, args); !s) return s;
  const std::vector<appended_row> rows = destinations(desc, args);
  if (desc.is_paged())
    if (status s = check_rows_distinct(desc, rows); !s) return s;
  append_rows(args.k, args.k_cache, args.k_scale, rows);
  append_rows(args.v, args.v_cache, args.v_scale, rows);
  advance_lengths(args);
  return {};
}

}  // namespace attngen
