// Appending new keys and values to a KV cache (attngen/runtime/kv_cache.hpp): each sequence's new rows
// land after its keys, in a dense cache or through its page table, converted to the cache's element
// type byte for byte as computed here independently of the runtime; kv_lengths advance; and each bad
// argument is an error that names it and writes nothing. KVH 2, D 8, Dv 4 throughout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attngen/runtime/kv_cache.hpp"

using namespace attngen;
using Catch::Matchers::Equals;

namespace {

constexpr int kv_heads = 2, head_dim = 8, v_head_dim = 4;
constexpr std::uint8_t poison = 0xAB;
constexpr dtype cache_types[] = {dtype::f32, dtype::f16, dtype::bf16, dtype::i8};

// A batch of new rows and the cache they are appended to; owns every buffer. The cache's tokens are
// (outer, inner): (B, Lk) dense, (num_pages, page_size) paged.
struct append_case {
  attention_desc desc;
  dtype source = dtype::f32;
  std::int64_t batch = 0, outer = 0, inner = 0, max_pages = 0;
  std::vector<std::int32_t> kv_lengths, new_offsets, page_table;
  std::vector<float> k_values, v_values;   // the new rows' values
  std::vector<std::uint8_t> k_new, v_new;  // the same, in the source type
  std::vector<std::uint8_t> k_cache, v_cache, k_scale, v_scale;

  std::int64_t total_new() const { return std::int64_t(k_values.size()) / (kv_heads * head_dim); }

  kv_append_args args() {
    kv_append_args a;
    const dtype element = desc.effective_kv_element();
    a.k = make_tensor(k_new.data(), source, {total_new(), kv_heads, head_dim});
    a.v = make_tensor(v_new.data(), source, {total_new(), kv_heads, v_head_dim});
    a.new_offsets = make_tensor(new_offsets.data(), dtype::i32, {batch + 1});
    a.k_cache = make_tensor(k_cache.data(), element, {outer, inner, kv_heads, head_dim});
    a.v_cache = make_tensor(v_cache.data(), element, {outer, inner, kv_heads, v_head_dim});
    if (desc.has_kv_scales()) {
      a.k_scale = make_tensor(k_scale.data(), dtype::f32, {outer, inner, kv_heads});
      a.v_scale = make_tensor(v_scale.data(), dtype::f32, {outer, inner, kv_heads});
    }
    if (desc.is_paged()) a.page_table = make_tensor(page_table.data(), dtype::i32, {batch, max_pages});
    a.kv_lengths = make_tensor(kv_lengths.data(), dtype::i32, {batch});
    return a;
  }

  // Every buffer, to compare before and after a call.
  auto buffers() const {
    return std::make_tuple(k_new, v_new, k_cache, v_cache, k_scale, v_scale, kv_lengths, new_offsets, page_table);
  }
};

// Values of either sign over many binades: from f16's subnormals to past its largest value (f32) or
// to just below it (f16 and bf16 rows).
std::vector<float> random_values(std::size_t count, dtype type, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> significand(1.0f, 2.0f);
  const int largest_exponent = type == dtype::f32 ? 17 : 14;
  std::uniform_int_distribution<int> exponent(-28, largest_exponent), sign(0, 1);
  std::vector<float> values(count);
  for (float& x : values) x = std::ldexp(sign(rng) ? -significand(rng) : significand(rng), exponent(rng));
  return values;
}

// `values` in `type`'s bytes: f16 rounded, bf16 truncated (an input need only be some value of its type).
std::vector<std::uint8_t> encoded(const std::vector<float>& values, dtype type) {
  std::vector<std::uint8_t> bytes(values.size() * size_of(type));
  for (std::size_t n = 0; n < values.size(); ++n) {
    std::uint8_t* out = bytes.data() + n * size_of(type);
    if (type == dtype::f16) {
      const _Float16 h = static_cast<_Float16>(values[n]);
      std::memcpy(out, &h, 2);
    } else if (type == dtype::bf16) {
      const auto bits = std::uint16_t(std::bit_cast<std::uint32_t>(values[n]) >> 16);
      std::memcpy(out, &bits, 2);
    } else {
      std::memcpy(out, &values[n], 4);
    }
  }
  return bytes;
}

// The values `bytes` of `type` hold.
std::vector<float> decoded(const std::vector<std::uint8_t>& bytes, dtype type) {
  std::vector<float> values(bytes.size() / size_of(type));
  for (std::size_t n = 0; n < values.size(); ++n) {
    const std::uint8_t* in = bytes.data() + n * size_of(type);
    if (type == dtype::f16) {
      _Float16 h;
      std::memcpy(&h, in, 2);
      values[n] = h;
    } else if (type == dtype::bf16) {
      std::uint16_t bits;
      std::memcpy(&bits, in, 2);
      values[n] = std::bit_cast<float>(std::uint32_t(bits) << 16);
    } else {
      std::memcpy(&values[n], in, 4);
    }
  }
  return values;
}

// The new rows: `k` and `v` in the source type, and the values that holds.
void set_new_values(append_case& c, const std::vector<float>& k, const std::vector<float>& v) {
  c.k_new = encoded(k, c.source);
  c.v_new = encoded(v, c.source);
  c.k_values = decoded(c.k_new, c.source);
  c.v_values = decoded(c.v_new, c.source);
}

// Random new rows, new_rows[b] for sequence b, and a poisoned cache.
void fill(append_case& c, const std::vector<std::int32_t>& new_rows) {
  c.batch = std::int64_t(c.kv_lengths.size());
  c.new_offsets = {0};
  for (std::int32_t n : new_rows) c.new_offsets.push_back(c.new_offsets.back() + n);
  const std::size_t rows = std::size_t(c.new_offsets.back());
  set_new_values(c, random_values(rows * kv_heads * head_dim, c.source, 7),
                 random_values(rows * kv_heads * v_head_dim, c.source, 8));
  const dtype element = c.desc.effective_kv_element();
  const std::size_t tokens = std::size_t(c.outer * c.inner);
  c.k_cache.assign(tokens * kv_heads * head_dim * size_of(element), poison);
  c.v_cache.assign(tokens * kv_heads * v_head_dim * size_of(element), poison);
  if (c.desc.has_kv_scales()) {
    c.k_scale.assign(tokens * kv_heads * sizeof(float), poison);
    c.v_scale.assign(tokens * kv_heads * sizeof(float), poison);
  }
}

attention_desc cache_description(dtype element) {
  return attention().heads(4).kv_heads(kv_heads).head_dim(head_dim).v_head_dim(v_head_dim).kv_element(element);
}

append_case dense_case(dtype element, std::int64_t key_length, std::vector<std::int32_t> kv_lengths,
                       const std::vector<std::int32_t>& new_rows, dtype source = dtype::f32) {
  append_case c;
  c.desc = cache_description(element).kv_lengths();
  c.source = source;
  c.kv_lengths = std::move(kv_lengths);
  c.outer = std::int64_t(c.kv_lengths.size());
  c.inner = key_length;
  fill(c, new_rows);
  return c;
}

append_case paged_case(dtype element, int page_size, std::int64_t pages,
                       const std::vector<std::vector<std::int32_t>>& table, std::vector<std::int32_t> kv_lengths,
                       const std::vector<std::int32_t>& new_rows) {
  append_case c;
  c.desc = cache_description(element).paged_kv(page_size);
  c.kv_lengths = std::move(kv_lengths);
  c.outer = pages;
  c.inner = page_size;
  c.max_pages = std::int64_t(table[0].size());
  for (const auto& row : table) c.page_table.insert(c.page_table.end(), row.begin(), row.end());
  fill(c, new_rows);
  return c;
}

// ---- The reference: what the cache should hold, computed without the runtime's code.

// `x` rounded to a binary format of `precision` significand bits whose smallest normal exponent is
// `min_exponent` (steps below it are subnormal), ties to even, and past `largest` to infinity. In
// double, where scaling by a power of two is exact.
double round_to_format(double x, int precision, int min_exponent, double largest) {
  if (!std::isfinite(x) || x == 0) return x;
  int exponent;
  std::frexp(x, &exponent);  // |x| in [2^(exponent - 1), 2^exponent)
  const double step = std::ldexp(1.0, std::max(exponent - 1, min_exponent) - (precision - 1));
  const double rounded = std::nearbyint(x / step) * step;  // the default rounding mode: ties to even
  return std::fabs(rounded) > largest ? std::copysign(INFINITY, x) : rounded;
}

void reference_store(dtype type, float x, std::uint8_t* out) {
  if (type == dtype::f16) {
    const auto h = static_cast<_Float16>(float(round_to_format(x, 11, -14, 65504.0)));  // exact
    std::memcpy(out, &h, 2);
  } else if (type == dtype::bf16) {
    const double largest = std::ldexp(2.0 - std::ldexp(1.0, -7), 127);
    const float rounded = float(round_to_format(x, 8, -126, largest));
    const auto bits = std::uint16_t(std::bit_cast<std::uint32_t>(rounded) >> 16);  // exact: the low half is 0
    std::memcpy(out, &bits, 2);
  } else {
    std::memcpy(out, &x, 4);
  }
}

// The integer q in [-127, 127] whose q x scale is nearest x, the larger |q| on a tie: candidates
// around x / scale compared by their errors (exact in double where two are close).
std::int8_t nearest_multiple(float x, float scale) {
  const double guess = std::floor(double(x) / scale);
  double best = 0, best_error = INFINITY;
  for (double q = std::max(guess - 1, -127.0); q <= std::min(guess + 2, 127.0); ++q) {
    const double error = std::fabs(double(x) - q * scale);
    if (error < best_error || (error == best_error && std::fabs(q) > std::fabs(best))) {
      best = q;
      best_error = error;
    }
  }
  return std::int8_t(best);
}

void reference_quantise(const float* row, int width, std::uint8_t* out, std::uint8_t* scale_out) {
  float largest = 0.0f;
  for (int e = 0; e < width; ++e) largest = std::max(largest, std::fabs(row[e]));
  const float scale = largest / 127.0f;
  for (int e = 0; e < width; ++e) {
    const std::int8_t q = scale == 0.0f ? 0 : nearest_multiple(row[e], scale);
    std::memcpy(out + e, &q, 1);
  }
  std::memcpy(scale_out, &scale, 4);
}

// The token (outer x inner + inner) where sequence b's key `key` is stored.
std::int64_t token_of(const append_case& c, std::int64_t b, std::int64_t key) {
  if (!c.desc.is_paged()) return b * c.inner + key;
  const int page_size = c.desc.kv_page_size;
  return std::int64_t(c.page_table[b * c.max_pages + key / page_size]) * page_size + key % page_size;
}

struct cache_state {
  std::vector<std::uint8_t> k_cache, v_cache, k_scale, v_scale;
  std::vector<std::int32_t> kv_lengths;
};

// Stores row `row_index` (token x KVH + head) of a cache of `element` and its scale.
void store_row(dtype element, const float* row, int width, std::int64_t row_index, std::vector<std::uint8_t>& cache,
               std::vector<std::uint8_t>& scales) {
  std::uint8_t* out = cache.data() + row_index * width * size_of(element);
  if (element == dtype::i8) {
    reference_quantise(row, width, out, scales.data() + row_index * 4);
    return;
  }
  for (int e = 0; e < width; ++e) reference_store(element, row[e], out + e * size_of(element));
}

cache_state expected_after_append(const append_case& c) {
  cache_state s{c.k_cache, c.v_cache, c.k_scale, c.v_scale, c.kv_lengths};
  const dtype element = c.desc.effective_kv_element();
  for (std::int64_t b = 0; b < c.batch; ++b) {
    const std::int32_t first = c.new_offsets[b], rows = c.new_offsets[b + 1] - first;
    for (std::int32_t r = 0; r < rows; ++r) {
      const std::int64_t token = token_of(c, b, c.kv_lengths[b] + r), n = first + r;
      for (int h = 0; h < kv_heads; ++h) {
        const std::int64_t row = token * kv_heads + h;
        store_row(element, &c.k_values[(n * kv_heads + h) * head_dim], head_dim, row, s.k_cache, s.k_scale);
        store_row(element, &c.v_values[(n * kv_heads + h) * v_head_dim], v_head_dim, row, s.v_cache, s.v_scale);
      }
    }
    s.kv_lengths[b] += rows;
  }
  return s;
}

// "" when equal, else the first differing byte.
std::string difference(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& expected) {
  if (got.size() != expected.size()) return "sizes differ";
  const auto [g, e] = std::mismatch(got.begin(), got.end(), expected.begin());
  if (g == got.end()) return "";
  return "byte " + std::to_string(g - got.begin()) + ": got " + std::to_string(*g) + ", expected " + std::to_string(*e);
}

// Appends and compares every cache byte (written and poisoned) and kv_lengths with the reference.
void check_append(append_case& c) {
  const cache_state expected = expected_after_append(c);
  const auto sources = std::make_tuple(c.k_new, c.v_new, c.new_offsets, c.page_table);
  const status s = append_kv(c.desc, c.args());
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(difference(c.k_cache, expected.k_cache) == "");
  CHECK(difference(c.v_cache, expected.v_cache) == "");
  CHECK(difference(c.k_scale, expected.k_scale) == "");
  CHECK(difference(c.v_scale, expected.v_scale) == "");
  CHECK(c.kv_lengths == expected.kv_lengths);
  CHECK(std::make_tuple(c.k_new, c.v_new, c.new_offsets, c.page_table) == sources);
}

// The stored bits of the first new row's 16 keys (KVH x D) of a one-sequence cache of 2-byte elements.
std::vector<std::uint16_t> first_key_row_bits(const append_case& c) {
  std::vector<std::uint16_t> bits(kv_heads * head_dim);
  std::memcpy(bits.data(), c.k_cache.data(), bits.size() * 2);
  return bits;
}

// A kv_lengths cache of one sequence and one new row whose keys are `keys` (KVH x D = 16 values).
append_case one_row_case(dtype element, const std::vector<float>& keys) {
  append_case c = dense_case(element, 2, {0}, {1});
  set_new_values(c, keys, std::vector<float>(kv_heads * v_head_dim, 1.0f));
  return c;
}

}  // namespace

// ---- Stored values

TEST_CASE("kv_lengths cache (B 3, Lk 10): new rows follow each sequence's keys, stored exactly in f32, f16, bf16 and "
          "i8",
          "[kv_cache]") {
  for (dtype element : cache_types) {
    DYNAMIC_SECTION(name_of(element) << " cache") {
      // 0 + 3 keys, 4 + 0 keys (nothing to write), 7 + 3 keys (filled to Lk).
      append_case c = dense_case(element, 10, {0, 4, 7}, {3, 0, 3});
      check_append(c);
    }
  }
}

TEST_CASE("paged cache, page_size 1, shuffled pages: each new row lands in its own page, stored exactly in f32, f16, "
          "bf16 and i8",
          "[kv_cache]") {
  for (dtype element : cache_types) {
    DYNAMIC_SECTION(name_of(element) << " cache") {
      append_case c = paged_case(element, 1, 12, {{7, 3, 11, 0, 5, 9}, {2, 10, 4, 8, 1, 6}}, {2, 1}, {3, 4});
      check_append(c);
    }
  }
}

TEST_CASE("paged cache, page_size 16, shuffled pages: appends crossing a page boundary, filling a page and a partly "
          "filled last page, stored exactly in f32, f16, bf16 and i8",
          "[kv_cache]") {
  for (dtype element : cache_types) {
    DYNAMIC_SECTION(name_of(element) << " cache") {
      // Sequence 0: keys 10 to 18, pages 5 and 2. Sequence 1: keys 16 to 31, all of page 6. Sequence 2:
      // keys 20 to 31, the rest of page 1; its entry -1 is past its last page, so not read.
      append_case c = paged_case(element, 16, 8, {{5, 2, 7}, {0, 6, 3}, {4, 1, -1}}, {10, 16, 20}, {9, 16, 12});
      check_append(c);
    }
  }
}

TEST_CASE("paged cache, page_size 4, shared pages: sequences sharing a full page and a partly filled one append to "
          "distinct rows, stored exactly in f32, f16, bf16 and i8",
          "[kv_cache]") {
  for (dtype element : cache_types) {
    DYNAMIC_SECTION(name_of(element) << " cache") {
      // Both read page 3 (full, untouched) and page 2: sequence 0 writes its rows 0 and 1, sequence 1
      // its rows 2 and 3 and then page 5.
      append_case c = paged_case(element, 4, 6, {{3, 2, 0}, {3, 2, 5}}, {4, 6}, {2, 4});
      check_append(c);
    }
  }
}

TEST_CASE("kv_lengths cache (B 3, Lk 10): new rows in f16 and bf16 are converted to f32, f16, bf16 and i8 exactly",
          "[kv_cache]") {
  for (dtype source : {dtype::f16, dtype::bf16})
    for (dtype element : cache_types) {
      DYNAMIC_SECTION(name_of(source) << " rows, " << name_of(element) << " cache") {
        append_case c = dense_case(element, 10, {0, 4, 7}, {3, 0, 3}, source);
        check_append(c);
      }
    }
}

TEST_CASE("bf16 cache: f32 rows round to nearest even, overflow to infinity, and NaN stays NaN", "[kv_cache]") {
  const float tie_down = 1.0f + 0x1p-8f, tie_up = 1.0f + 3 * 0x1p-8f;
  append_case c = one_row_case(
      dtype::bf16, {tie_down, tie_up, -tie_down, tie_down + 0x1p-20f, std::numeric_limits<float>::max(),
                    std::bit_cast<float>(0x7F7F0000u), INFINITY, -INFINITY, std::numeric_limits<float>::quiet_NaN(),
                    std::bit_cast<float>(0x7F800001u), 0.0f, -0.0f, 1e-40f, 0.1f, 1.0f / 3, -2.5f});
  REQUIRE(append_kv(c.desc, c.args()).ok());
  const std::vector<std::uint16_t> bits = first_key_row_bits(c);
  const auto is_nan = [](std::uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0; };
  CHECK(bits[0] == 0x3F80);
  CHECK(bits[1] == 0x3F82);
  CHECK(bits[2] == 0xBF80);
  CHECK(bits[3] == 0x3F81);
  CHECK(bits[4] == 0x7F80);
  CHECK(bits[5] == 0x7F7F);
  CHECK(bits[6] == 0x7F80);
  CHECK(bits[7] == 0xFF80);
  CHECK(is_nan(bits[8]));
  CHECK(is_nan(bits[9]));  // a signalling NaN, which truncated or rounded naively becomes infinity
  CHECK(bits[10] == 0x0000);
  CHECK(bits[11] == 0x8000);
  CHECK(bits[12] == 0x0001);
  CHECK(bits[13] == 0x3DCD);
  CHECK(bits[14] == 0x3EAB);
  CHECK(bits[15] == 0xC020);
}

TEST_CASE("f16 cache: f32 rows round to nearest even, to subnormals and to infinity", "[kv_cache]") {
  append_case c = one_row_case(
      dtype::f16, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65519.0f, 65520.0f, -1e6f, 0x1p-24f, 0x1p-25f,
                   3 * 0x1p-25f, -0x1p-26f, INFINITY, std::numeric_limits<float>::quiet_NaN(), 0.1f, -2.0f, 0x1p-14f,
                   1.0f / 3});
  REQUIRE(append_kv(c.desc, c.args()).ok());
  const std::vector<std::uint16_t> bits = first_key_row_bits(c);
  const std::vector<std::uint16_t> expected = {0x3C00, 0x3C02, 0x7BFF, 0x7BFF, 0x7C00, 0xFC00, 0x0001, 0x0000,
                                               0x0002, 0x8000, 0x7C00, bits[11], 0x2E66, 0xC000, 0x0400, 0x3555};
  CHECK(bits == expected);
  CHECK((bits[11] & 0x7C00) == 0x7C00);
  CHECK((bits[11] & 0x03FF) != 0);  // NaN
}

TEST_CASE("i8 kv_lengths cache: each stored value dequantises to within half its row's scale", "[kv_cache]") {
  append_case c = dense_case(dtype::i8, 10, {0, 4, 7}, {3, 2, 3});
  const append_case before = c;
  REQUIRE(append_kv(c.desc, c.args()).ok());
  for (std::int64_t b = 0; b < before.batch; ++b)
    for (std::int32_t n = before.new_offsets[b]; n < before.new_offsets[b + 1]; ++n)
      for (int h = 0; h < kv_heads; ++h) {
        const std::int64_t row = token_of(before, b, before.kv_lengths[b] + n - before.new_offsets[b]) * kv_heads + h;
        float scale;
        std::memcpy(&scale, c.k_scale.data() + row * 4, 4);
        for (int e = 0; e < head_dim; ++e) {
          const double x = before.k_values[(n * kv_heads + h) * head_dim + e];
          const double value = scale * double(std::int8_t(c.k_cache[row * head_dim + e]));
          CHECK(std::fabs(value - x) <= scale / 2.0);
        }
      }
}

TEST_CASE("i8 kv_lengths cache: a row of zeros gets scale 0 and integers 0, the next row its own scale", "[kv_cache]") {
  std::vector<float> keys(kv_heads * head_dim, 0.0f);
  keys[head_dim + 3] = -2.54f;  // kv head 1: largest magnitude 2.54, scale 0.02
  append_case c = one_row_case(dtype::i8, keys);
  REQUIRE(append_kv(c.desc, c.args()).ok());
  float scales[kv_heads];
  std::memcpy(scales, c.k_scale.data(), sizeof scales);
  CHECK(std::bit_cast<std::uint32_t>(scales[0]) == 0u);
  CHECK(scales[1] == 2.54f / 127.0f);
  CHECK(std::all_of(c.k_cache.begin(), c.k_cache.begin() + head_dim, [](std::uint8_t q) { return q == 0; }));
  CHECK(std::int8_t(c.k_cache[head_dim + 3]) == -127);
}

TEST_CASE("i8 kv_lengths cache: values halfway between two integers x scale round away from zero", "[kv_cache]") {
  std::vector<float> keys(kv_heads * head_dim, 0.0f);
  const std::vector<float> head_0 = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, 126.5f, 0.49999997f};  // scale 1
  std::copy(head_0.begin(), head_0.end(), keys.begin());
  append_case c = one_row_case(dtype::i8, keys);
  REQUIRE(append_kv(c.desc, c.args()).ok());
  std::vector<int> stored(head_dim);
  for (int e = 0; e < head_dim; ++e) stored[e] = std::int8_t(c.k_cache[e]);
  CHECK(stored == std::vector<int>{127, 3, -3, 1, -1, 2, 127, 0});
}

TEST_CASE("kv_lengths advance by the rows appended, and a second append continues after the first, in a paged i8 cache",
          "[kv_cache]") {
  append_case c = paged_case(dtype::i8, 4, 8, {{6, 1, 3, 0}, {2, 7, 5, 4}}, {1, 0}, {5, 3});
  check_append(c);
  CHECK(c.kv_lengths == std::vector<std::int32_t>{6, 3});
  check_append(c);
  CHECK(c.kv_lengths == std::vector<std::int32_t>{11, 6});
}

TEST_CASE("a batch of no sequences appends nothing and succeeds", "[kv_cache]") {
  append_case c = dense_case(dtype::f16, 4, {}, {});
  CHECK(append_kv(c.desc, c.args()).ok());
}

// ---- Errors

namespace {

// Calls append_kv with the arguments changed by `break_it`; checks the error and that no buffer changed.
void expect_error(append_case c, const std::function<void(append_case&, kv_append_args&)>& break_it, error_code code,
                  const std::string& message) {
  kv_append_args args = c.args();
  break_it(c, args);
  const auto before = c.buffers();
  const status s = append_kv(c.desc, args);
  CHECK_THAT(s.message(), Equals(message));
  CHECK(s.code() == code);
  CHECK(c.buffers() == before);
}

// A paged i8 cache (page_size 4, 6 pages, 3 per sequence) and 5 new rows: sequence 0's keys 5 to 7
// in page 2, sequence 1's keys 0 and 1 in page 1.
append_case paged_base() { return paged_case(dtype::i8, 4, 6, {{3, 2, 0}, {1, 4, 5}}, {5, 0}, {3, 2}); }

// A kv_lengths f16 cache (B 2, Lk 6) and 4 new rows, after 1 and 4 keys.
append_case dense_base() { return dense_case(dtype::f16, 6, {1, 4}, {2, 2}); }

}  // namespace

TEST_CASE("a description with a dense kv layout is refused, naming the layout", "[kv_cache]") {
  expect_error(
      dense_base(), [](append_case& c, kv_append_args&) { c.desc = cache_description(dtype::f16); },
      error_code::unexpected_tensor,
      "desc: the kv layout is dense (every sequence has Lk keys, no kv_lengths), so there is no end to append at; "
      "describe the cache with kv_lengths() or paged_kv(page_size)");
}

TEST_CASE("paged cache: k on a CUDA device is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k = on_device(a.k, device_kind::cuda); },
      error_code::wrong_device, "k: is on cuda; append_kv writes the cache on the host and takes host tensors only");
}

TEST_CASE("paged cache: a v_cache on a CUDA device is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.v_cache = on_device(a.v_cache, device_kind::cuda); },
      error_code::wrong_device,
      "v_cache: is on cuda; append_kv writes the cache on the host and takes host tensors only");
}

TEST_CASE("paged cache: a k_cache made from a const pointer is refused as read-only", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k_cache.read_only = true; }, error_code::read_only_output,
      "k_cache: is a view of const memory (made from a const pointer), but the kernel writes it");
}

TEST_CASE("paged cache: a null k_cache pointer is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k_cache.data = nullptr; }, error_code::null_pointer,
      "k_cache: data pointer is null");
}

TEST_CASE("paged cache: new keys of element type i32 are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k.type = dtype::i32; }, error_code::wrong_dtype,
      "k: expected element type f32, f16 or bf16, got i32");
}

TEST_CASE("paged i8 cache: a k_cache of another element type than the description's is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k_cache.type = dtype::u8; }, error_code::wrong_dtype,
      "k_cache: expected element type i8, got u8");
}

TEST_CASE("paged cache: float kv_lengths are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.kv_lengths.type = dtype::f32; }, error_code::wrong_dtype,
      "kv_lengths: expected element type i32, got f32");
}

TEST_CASE("paged cache: a page_table of rank 1 is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.page_table.rank = 1; }, error_code::wrong_rank,
      "page_table: expected rank 2 (B, max_pages), got rank 1");
}

TEST_CASE("paged cache: k with the wrong number of kv heads is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k.shape[1] = 1; }, error_code::wrong_shape,
      "k: expected 2 kv heads, got 1; shape is (5, 1, 8)");
}

TEST_CASE("paged cache: v with the wrong v head_dim is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.v.shape[2] = 8; }, error_code::wrong_shape,
      "v: expected v head_dim 4, got 8; shape is (5, 2, 8)");
}

TEST_CASE("paged cache: v with fewer new rows than k is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.v.shape[0] = 4; }, error_code::wrong_shape,
      "v: expected total_new 5 (from k), got 4; shape is (4, 2, 4)");
}

TEST_CASE("paged cache: new_offsets with other than B + 1 entries are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.new_offsets.shape[0] = 2; }, error_code::wrong_shape,
      "new_offsets: expected 3 entries (B + 1) (from kv_lengths), got 2; shape is (2)");
}

TEST_CASE("kv_lengths cache: a k_cache whose batch differs from kv_lengths is refused", "[kv_cache]") {
  expect_error(
      dense_base(), [](append_case&, kv_append_args& a) { a.k_cache.shape[0] = 1; }, error_code::wrong_shape,
      "k_cache: expected batch 2 (from kv_lengths), got 1; shape is (1, 6, 2, 8)");
}

TEST_CASE("kv_lengths cache: a v_cache whose Lk differs from k_cache is refused", "[kv_cache]") {
  expect_error(
      dense_base(), [](append_case&, kv_append_args& a) { a.v_cache.shape[1] = 5; }, error_code::wrong_shape,
      "v_cache: expected Lk 6 (from k_cache), got 5; shape is (2, 5, 2, 4)");
}

TEST_CASE("paged cache: a k_cache whose page_size differs from the description's is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k_cache.shape[1] = 2; }, error_code::wrong_shape,
      "k_cache: expected page_size 4, got 2; shape is (6, 2, 2, 8)");
}

TEST_CASE("paged cache: a v_cache with fewer pages than k_cache is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.v_cache.shape[0] = 5; }, error_code::wrong_shape,
      "v_cache: expected 6 pages (from k_cache), got 5; shape is (5, 4, 2, 4)");
}

TEST_CASE("paged i8 cache: a k_scale with the wrong number of kv heads is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k_scale.shape[2] = 1; }, error_code::wrong_shape,
      "k_scale: expected 2 kv heads, got 1; shape is (6, 4, 1)");
}

TEST_CASE("paged cache: a page_table whose batch differs from kv_lengths is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.page_table.shape[0] = 1; }, error_code::wrong_shape,
      "page_table: expected batch 2 (from kv_lengths), got 1; shape is (1, 3)");
}

TEST_CASE("paged cache: a k_cache whose strides give two elements one address is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.k_cache.strides[1] = 1; }, error_code::wrong_stride,
      "k_cache: strides (64, 1, 8, 1) with shape (6, 4, 2, 8) give two elements one address; an output needs its "
      "own place for each element");
}

TEST_CASE("paged cache: new_offsets not starting at 0 are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args&) { c.new_offsets[0] = 1; }, error_code::wrong_shape,
      "new_offsets: must start at 0, got new_offsets[0] = 1");
}

TEST_CASE("paged cache: decreasing new_offsets are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args&) { c.new_offsets = {0, 3, 2}; }, error_code::wrong_shape,
      "new_offsets: decreases at sequence 1: new_offsets[1] = 3, new_offsets[2] = 2");
}

TEST_CASE("paged cache: new_offsets past total_new are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args&) { c.new_offsets = {0, 3, 6}; }, error_code::wrong_shape,
      "new_offsets: new_offsets[2] = 6 exceeds total_new (5, the rows of k)");
}

TEST_CASE("paged cache: a negative kv length is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args&) { c.kv_lengths[1] = -1; }, error_code::wrong_shape,
      "kv_lengths: kv_lengths[1] = -1 is outside 0 to 12 keys its page table row holds (max_pages x page_size)");
}

TEST_CASE("kv_lengths cache: new rows past Lk are refused, naming kv_lengths", "[kv_cache]") {
  expect_error(
      dense_base(), [](append_case& c, kv_append_args&) { c.kv_lengths[1] = 5; }, error_code::wrong_shape,
      "kv_lengths: kv_lengths[1] = 5 and sequence 1's 2 new rows make 7 keys, more than its capacity, 6 (Lk)");
}

TEST_CASE("paged cache: new rows past max_pages x page_size are refused, naming kv_lengths", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args&) { c.kv_lengths[0] = 10; }, error_code::wrong_shape,
      "kv_lengths: kv_lengths[0] = 10 and sequence 0's 3 new rows make 13 keys, more than its capacity, 12 keys its "
      "page table row holds (max_pages x page_size)");
}

TEST_CASE("paged cache: a page-table entry outside the pool for the next page an append crosses into is refused",
          "[kv_cache]") {
  // Sequence 0's new keys 7 to 9: key 7 in page_table[0][1], keys 8 and 9 in page_table[0][2].
  expect_error(
      paged_base(),
      [](append_case& c, kv_append_args&) {
        c.kv_lengths[0] = 7;
        c.page_table[2] = 6;
      },
      error_code::wrong_shape,
      "page_table: page_table[0][2] = 6 is outside the pool's pages 0 to 5, but sequence 0's new keys 8 to 9 go to "
      "that page");
}

TEST_CASE("paged cache: a negative page-table entry for a page receiving rows is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args&) { c.page_table[3] = -1; }, error_code::wrong_shape,
      "page_table: page_table[1][0] = -1 is outside the pool's pages 0 to 5, but sequence 1's new keys 0 to 1 go to "
      "that page");
}

TEST_CASE("paged cache: a page-table entry outside the pool past the new rows' last page is not read", "[kv_cache]") {
  append_case c = paged_base();
  c.page_table[2] = 6;  // sequence 0's new keys 5 to 7 end in page_table[0][1]
  check_append(c);
}

TEST_CASE("paged f16 cache: scales given for a cache that is not i8 are refused", "[kv_cache]") {
  append_case c = paged_case(dtype::f16, 4, 6, {{3, 2, 0}, {1, 4, 5}}, {5, 0}, {3, 2});
  c.k_scale.assign(6 * 4 * kv_heads * sizeof(float), poison);
  expect_error(
      c,
      [](append_case& c, kv_append_args& a) {
        a.k_scale = make_tensor(c.k_scale.data(), dtype::f32, {6, 4, kv_heads});
      },
      error_code::unexpected_tensor,
      "k_scale: this kernel's description has no int8 keys and values, but a tensor was given");
}

TEST_CASE("paged i8 cache: missing scales are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.v_scale = {}; }, error_code::null_pointer,
      "v_scale: not given; append_kv takes it for a paged (page_size 4) i8 cache");
}

TEST_CASE("paged cache: a missing page_table is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case&, kv_append_args& a) { a.page_table = {}; }, error_code::null_pointer,
      "page_table: not given; append_kv takes it for a paged (page_size 4) i8 cache");
}

TEST_CASE("kv_lengths cache: a page_table is refused", "[kv_cache]") {
  expect_error(
      dense_base(),
      [](append_case& c, kv_append_args& a) { a.page_table = make_tensor(c.kv_lengths.data(), dtype::i32, {2, 1}); },
      error_code::unexpected_tensor,
      "page_table: this kernel's description has no paged KV cache, but a tensor was given");
}

TEST_CASE("paged cache: two sequences sharing a page whose new rows land in one row are refused", "[kv_cache]") {
  // Sequence 0's key 5 and sequence 1's key 5 are both row 1 of page 2.
  expect_error(
      paged_base(),
      [](append_case& c, kv_append_args&) {
        c.page_table[4] = 2;
        c.kv_lengths[1] = 4;
      },
      error_code::wrong_shape,
      "page_table: page_table[0][1] and page_table[1][1] are both page 2: sequence 0's key 5 and sequence 1's key 5 "
      "would both be written to its row 1");
}

TEST_CASE("paged cache: a page listed twice in one sequence's row, so that two of its new rows land in one row, is "
          "refused",
          "[kv_cache]") {
  expect_error(
      paged_case(dtype::f32, 4, 6, {{2, 2, 0}, {1, 4, 5}}, {0, 0}, {5, 1}), [](append_case&, kv_append_args&) {},
      error_code::wrong_shape,
      "page_table: page_table[0][0] and page_table[0][1] are both page 2: sequence 0's key 0 and sequence 0's key 4 "
      "would both be written to its row 0");
}

TEST_CASE("paged cache: a k_cache overlapping the new keys is refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args& a) { a.k_cache.data = c.k_new.data(); }, error_code::wrong_shape,
      "k_cache: overlaps k in memory; append_kv reads k while it writes k_cache");
}

TEST_CASE("paged cache: kv_lengths overlapping new_offsets are refused", "[kv_cache]") {
  expect_error(
      paged_base(), [](append_case& c, kv_append_args& a) { a.kv_lengths.data = c.new_offsets.data(); },
      error_code::wrong_shape,
      "kv_lengths: overlaps new_offsets in memory; append_kv reads new_offsets while it writes kv_lengths");
}
