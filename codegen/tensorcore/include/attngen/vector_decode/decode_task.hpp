#pragma once
/// Decoding on 16-lane vectors, for the calls attngen/vector_decode/call.hpp takes: the runtime compiles
/// it for AVX-512 (vector_decode.cpp's target region, ATTNGEN_VECTOR_DECODE_AVX512 defined), the tests
/// for whatever their build targets.
///
/// A task is task_keys keys of one sequence, in chunks of chunk_keys keys, every kv head of a chunk in
/// turn (the order a paged cache holds them in):
/// - q.k with the head dim in lanes: a key row is widened to float once and meets each of the group's
///   rows; 16 keys' sums of a row fold into one vector of scores (lane t: key t);
/// - an online softmax per chunk and kv head, in base 2 (q is scaled by log2 e);
/// - p.V into the row's output, kept in the scratch, 4 rows x 64 dims in registers per pass over V.
/// An int8 cache's products are taken in 16-bit integers (integer_products.hpp), its scales multiplying
/// the scores and the weights, so its rows are widened, never scaled.
/// While a chunk is used, the one chunks_fetched_ahead on is fetched into L2, in address order,
/// beside its products: a sequence's pages lie anywhere in the pool, where no hardware prefetcher
/// follows.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
#include <immintrin.h>
#endif

#include "attngen/simd/vectors.hpp"
#include "attngen/vector_decode/call.hpp"
#include "attngen/vector_decode/integer_products.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace attngen::vector_decode {
namespace {

using namespace attngen::simd;

/// 16 elements of a floating cache row from `at`, as float: one widening (GCC 12 converts vectors of
/// narrower elements element by element).
template <dtype E>
inline f32x16 widen(const unsigned char* at) {
  static_assert(E == dtype::f32 || E == dtype::bf16 || E == dtype::f16);
  if constexpr (E == dtype::f32) {
    return load<f32x16>(at);
  } else {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
    const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    if constexpr (E == dtype::bf16)
      return f32x16(_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(words), 16)));
    else
      return f32x16(_mm512_cvtph_ps(words));
#else
    f32x16 wide;
    for (int n = 0; n < 16; ++n) {
      if constexpr (E == dtype::bf16)
        wide[n] = __builtin_bit_cast(float, std::uint32_t(load<std::uint16_t>(at + 2 * n)) << 16);
      else
        wide[n] = float(load<_Float16>(at + 2 * n));
    }
    return wide;
#endif
  }
}

/// *at in every lane: a load that broadcasts (splat's vector add of zero would cost a shuffle too).
inline f32x16 broadcast(const float* at) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  return f32x16(_mm512_set1_ps(*at));
#else
  return splat(*at);
#endif
}

inline f32x16 fma_of(f32x16 a, f32x16 b, f32x16 c) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  return f32x16(_mm512_fmadd_ps(__m512(a), __m512(b), __m512(c)));
#else
  return a * b + c;
#endif
}

/// `prefetcht2` of the line at `address`, written out: GCC 12 deletes loops of __builtin_prefetch
/// alone (as loops without side effects) in some nests.
inline void prefetch_into_l2(const void* address) {
#if defined(__x86_64__)
  __asm__ volatile("prefetcht2 %0" ::"m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address, 0, 1);
#endif
}

/// The slot of key t's sums: folded in this order, lane t of the scores is key t's.
constexpr int slot_of(int t) { return (t & 1) << 3 | (t & 2) << 1 | (t & 4) >> 1 | (t & 8) >> 3; }

// One fold of pairs of vectors: within each block of 2H lanes, the first H lanes sum a's two halves
// of the block, the next H b's.
constexpr int low_lane(int h, int lane) {
  const int position = lane % (2 * h), block = lane - position;
  return position < h ? block + position : 16 + block + position - h;
}
constexpr int high_lane(int h, int lane) {
  const int position = lane % (2 * h), block = lane - position;
  return position < h ? block + h + position : 16 + block + position;
}
template <int H, typename V, std::size_t... L>
inline V fold(V a, V b, std::index_sequence<L...>) {
  return __builtin_shufflevector(a, b, low_lane(H, int(L))...) + __builtin_shufflevector(a, b, high_lane(H, int(L))...);
}

/// Lane t: the sum of the lanes of sums[slot_of(t)].
template <typename V>
inline V lane_sums(const V* sums) {
  constexpr auto lanes = std::make_index_sequence<16>{};
  V halves[8], quarters[4], eighths[2];
  for (int j = 0; j < 8; ++j) halves[j] = fold<8>(sums[2 * j], sums[2 * j + 1], lanes);
  for (int j = 0; j < 4; ++j) quarters[j] = fold<4>(halves[2 * j], halves[2 * j + 1], lanes);
  for (int j = 0; j < 2; ++j) eighths[j] = fold<2>(quarters[2 * j], quarters[2 * j + 1], lanes);
  return fold<1>(eighths[0], eighths[1], lanes);
}

/// The largest lane, NaN where any lane is.
inline float largest_lane(f32x16 v) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  if (_mm512_cmp_ps_mask(__m512(v), __m512(v), _CMP_UNORD_Q) != 0) return std::numeric_limits<float>::quiet_NaN();
  return _mm512_reduce_max_ps(__m512(v));
#else
  float most = v[0];
  for (int n = 1; n < 16; ++n) most = v[n] > most || v[n] != v[n] ? v[n] : most;
  return most;
#endif
}
inline float lane_total(f32x16 v) {
#if defined(ATTNGEN_VECTOR_DECODE_AVX512)
  return _mm512_reduce_add_ps(__m512(v));
#else
  float sum = 0.0f;
  for (int n = 0; n < 16; ++n) sum += v[n];
  return sum;
#endif
}

/// A chunk's keys: where each key's row (kv head 0) and scale lie, and how many keys it has.
struct chunk_rows {
  const unsigned char* k[chunk_keys];
  const unsigned char* v[chunk_keys];
  const float* k_scale[chunk_keys];
  const float* v_scale[chunk_keys];
  int keys = 0;
};

/// Rows r0 .. r0 + N - 1 of one kv head: out = out x rescale + weights . V over the chunk's keys, W
/// vectors of dims from vector v0 at a time; fetch(1) beside each key's products.
template <dtype E, int D, int N, int W, typename Fetch>
inline void add_values(const chunk_rows& chunk, std::int64_t head_bytes, int v0, const float* weights, float* out,
                       const float* rescale, Fetch& fetch) {
  constexpr int bytes = size_of(E);
  f32x16 sum[N][W];
#pragma GCC unroll 4
  for (int n = 0; n < N; ++n)
#pragma GCC unroll 4
    for (int j = 0; j < W; ++j) sum[n][j] = load<f32x16>(out + n * D + (v0 + j) * 16) * rescale[n];
  for (int t = 0; t < chunk.keys; ++t) {
    fetch(1);
    const unsigned char* row = chunk.v[t] + head_bytes + v0 * 16 * bytes;
    f32x16 value[W];
#pragma GCC unroll 4
    for (int j = 0; j < W; ++j) value[j] = widen<E>(row + j * 16 * bytes);
#pragma GCC unroll 4
    for (int n = 0; n < N; ++n) {
      const f32x16 weight = broadcast(weights + n * chunk_keys + t);
#pragma GCC unroll 4
      for (int j = 0; j < W; ++j) sum[n][j] = fma_of(value[j], weight, sum[n][j]);
    }
  }
#pragma GCC unroll 4
  for (int n = 0; n < N; ++n)
#pragma GCC unroll 4
    for (int j = 0; j < W; ++j) store(out + n * D + (v0 + j) * 16, sum[n][j]);
}

/// Passes over a chunk's keys that p.V takes per four rows.
template <dtype E, int D>
constexpr int value_passes() {
  return E == dtype::i8 ? (D + 63) / 64 : (D / 16 + 3) / 4;
}

template <dtype E, int D, int N, typename Fetch>
inline void add_values(const chunk_rows& chunk, std::int64_t head_bytes, const float* weights, float* out,
                       const float* rescale, Fetch& fetch) {
  constexpr int vectors = D / 16, whole = vectors / 4 * 4;
  for (int v0 = 0; v0 < whole; v0 += 4) add_values<E, D, N, 4>(chunk, head_bytes, v0, weights, out, rescale, fetch);
  if constexpr (vectors % 4 != 0)
    add_values<E, D, N, vectors % 4>(chunk, head_bytes, whole, weights, out, rescale, fetch);
}

/// add_values for an int8 cache, its weights as words (steps[n] each, for row n) and its rows widened to
/// words, two keys at a time: Dims dims (64, 32 or 16) from dim d0.
template <int D, int N, int Dims, typename Fetch>
inline void add_value_words(const chunk_rows& chunk, std::int64_t head_bytes, int d0, const std::int16_t* weights,
                            const float* steps, float* out, const float* rescale, Fetch& fetch) {
  constexpr int blocks = (Dims + 31) / 32;
  constexpr bool half_block = Dims % 32 != 0;
  i32x16 sum[N][2 * blocks];
#pragma GCC unroll 4
  for (int n = 0; n < N; ++n)
#pragma GCC unroll 4
    for (int j = 0; j < 2 * blocks; ++j) sum[n][j] = i32x16{};
  for (int t = 0; t < chunk.keys; t += 2) {
    fetch(2);
    // An odd chunk's last key pairs with itself, the second's weight 0.
    const unsigned char* first = chunk.v[t] + head_bytes + d0;
    const unsigned char* second = t + 1 < chunk.keys ? chunk.v[t + 1] + head_bytes + d0 : first;
    i16x32 pairs[2 * blocks];
#pragma GCC unroll 2
    for (int i = 0; i < blocks; ++i) {
      i16x32& low = pairs[2 * i];
      i16x32& high = pairs[2 * i + 1];
      if (half_block && i == blocks - 1)
        key_pairs(widen_to_words<16>(first + 32 * i), widen_to_words<16>(second + 32 * i), low, high);
      else
        key_pairs(widen_to_words<32>(first + 32 * i), widen_to_words<32>(second + 32 * i), low, high);
    }
#pragma GCC unroll 4
    for (int n = 0; n < N; ++n) {
      const i16x32 weight = __builtin_bit_cast(i16x32, broadcast_pair(weights + n * chunk_keys + t));
#pragma GCC unroll 4
      for (int j = 0; j < 2 * blocks; ++j) sum[n][j] = add_pair_products(sum[n][j], pairs[j], weight);
    }
  }
#pragma GCC unroll 4
  for (int n = 0; n < N; ++n)
#pragma GCC unroll 2
    for (int i = 0; i < blocks; ++i) {
      f32x16 low, high;
      dims_in_order(float_of(sum[n][2 * i]), float_of(sum[n][2 * i + 1]), low, high);
      float* at = out + n * D + d0 + 32 * i;
      store(at, load<f32x16>(at) * rescale[n] + low * steps[n]);
      if (!(half_block && i == blocks - 1)) store(at + 16, load<f32x16>(at + 16) * rescale[n] + high * steps[n]);
    }
}

template <int D, int N, typename Fetch>
inline void add_value_words(const chunk_rows& chunk, std::int64_t head_bytes, const std::int16_t* weights,
                            const float* steps, float* out, const float* rescale, Fetch& fetch) {
  constexpr int whole = D / 64 * 64;
  for (int d0 = 0; d0 < whole; d0 += 64)
    add_value_words<D, N, 64>(chunk, head_bytes, d0, weights, steps, out, rescale, fetch);
  if constexpr (D % 64 != 0)
    add_value_words<D, N, D % 64>(chunk, head_bytes, whole, weights, steps, out, rescale, fetch);
}

/// f.template operator()<N>() for N = n, 1 to 4: p.V's rows of one pass.
template <typename F>
inline void with_rows(int n, F&& f) {
  switch (n) {
    case 1: f.template operator()<1>(); break;
    case 2: f.template operator()<2>(); break;
    case 3: f.template operator()<3>(); break;
    default: f.template operator()<4>(); break;
  }
}

/// Task `task` of `c`, in `scratch`. The worker's next task is `following` (-1 when it has none): its
/// first chunks are fetched while this task's last are used; `leading_fetched` says the task before
/// did so for this one.
template <dtype E, int D>
void decode_task(const call& c, int task, int following, bool leading_fetched, unsigned char* scratch) {
  constexpr int vectors = D / 16, bytes = size_of(E), chunk_size = keys_per_chunk(E), groups = chunk_size / group_keys;
  constexpr float log2e = 1.4426950408889634f, ln2 = 0.6931471805599453f;
  constexpr float minus_infinity = -std::numeric_limits<float>::infinity();
  constexpr bool scaled = E == dtype::i8;
  const params& p = c.p;
  const int KVH = p.kv_heads, group = p.group();
  const int R = c.row_capacity;
  const scratch_layout layout = scratch_for(D, KVH, R);
  const task_span span = c.span_of(task);
  const task_span next_span = following >= 0 ? c.span_of(following) : task_span{};
  const int b = span.b, rows = p.rows_of(b), start = span.start, last_key = span.end;
  int key_end[max_rows];
  for (int r = 0; r < rows; ++r) key_end[r] = p.key_end(b, r) < last_key ? p.key_end(b, r) : last_key;

  auto* const queries = reinterpret_cast<float*>(scratch + layout.queries);
  auto* const out = reinterpret_cast<float*>(scratch + layout.out);
  auto* const max_sum = reinterpret_cast<float*>(scratch + layout.max_sum);
  auto* const sums = reinterpret_cast<f32x16*>(scratch + layout.sums);
  auto* const weights = reinterpret_cast<float*>(scratch + layout.weights);
  // An int8 cache's: q's rows and the weights as words, their steps, the sums as integers.
  auto* const query_steps = reinterpret_cast<float*>(scratch + layout.query_steps);
  auto* const word_weights = reinterpret_cast<std::int16_t*>(weights);
  auto* const integer_sums = reinterpret_cast<i32x16*>(sums);
  constexpr int word_vectors = (D + 31) / 32;

  const auto* const k_cache = static_cast<const unsigned char*>(p.k);
  const auto* const v_cache = static_cast<const unsigned char*>(p.v);
  const bool paged = p.page_size > 0;
  const int page_shift = paged ? __builtin_ctz(unsigned(p.page_size)) : 0;
  // Chunk i of the worker's keys, this task's and then the following one's: its keys' rows of kv
  // head 0, each key's first element (no keys past both).
  const int own_chunks = (last_key - start + chunk_size - 1) / chunk_size;
  auto rows_of_chunk = [&](int i, chunk_rows& chunk) {
    const task_span& of = i < own_chunks ? span : next_span;
    const int first = of.start + (i < own_chunks ? i : i - own_chunks) * chunk_size;
    chunk.keys = of.end - first < chunk_size ? of.end - first : chunk_size;
    if (chunk.keys < 0) chunk.keys = 0;
    for (int t = 0; t < chunk.keys; ++t) {
      const int key = first + t;
      std::int64_t outer = of.b, token = key;
      if (paged) {
        outer = p.page_table[of.b * p.table_stride + (key >> page_shift)];
        token = key & (p.page_size - 1);
      }
      chunk.k[t] = k_cache + (outer * p.k_outer + token * p.k_token) * bytes;
      chunk.v[t] = v_cache + (outer * p.v_outer + token * p.v_token) * bytes;
      if constexpr (scaled) {
        chunk.k_scale[t] = p.k_scale + outer * p.ks_outer + token * p.ks_token;
        chunk.v_scale[t] = p.v_scale + outer * p.vs_outer + token * p.vs_token;
      }
    }
  };

  constexpr int ahead = chunks_fetched_ahead;
  chunk_rows chunks[ahead + 1];
  for (int i = 0; i < ahead; ++i) rows_of_chunk(i, chunks[i]);
  // A key's rows of every kv head, line by line: in address order where the cache holds a token's
  // heads together. The first chunks_fetched_ahead chunks' are fetched before the queries are
  // scaled (unless the task before fetched them), each later chunk's beside the products of the one
  // that many before it.
  constexpr int lines_per_row = (D * bytes + 63) / 64;
  const int lines_per_key = KVH * lines_per_row;
  auto fetch_line = [&](const chunk_rows& chunk, int t, int line) {
    const int h = line / lines_per_row, at = line % lines_per_row * 64;
    prefetch_into_l2(chunk.k[t] + h * p.k_head * bytes + at);
    prefetch_into_l2(chunk.v[t] + h * p.v_head * bytes + at);
    // An int8 cache's scales lie apart from its rows, each key's kv heads together where the pool
    // holds a token's heads together.
    if constexpr (scaled)
      if (line == 0) {
        prefetch_into_l2(chunk.k_scale[t]);
        prefetch_into_l2(chunk.v_scale[t]);
      }
  };
  for (int i = leading_fetched ? own_chunks : 0; i < ahead; ++i)
    for (int t = 0; t < chunks[i].keys; ++t)
      for (int line = 0; line < lines_per_key; ++line) fetch_line(chunks[i], t, line);

  // q's rows times the call's scale and log2 e, so that the scores are in base 2; for an int8 cache,
  // rounded to words (zero to a whole number of word vectors), the steps apart in query_steps.
  const float q_factor = p.scale * log2e;
  for (int h = 0; h < KVH; ++h)
    for (int r = 0; r < rows; ++r) {
      const float* row = p.q + p.first_row(b, p.q_batch, p.q_query) + (r / group) * p.q_query +
                         (h * group + r % group) * p.q_head;
      float* scaled_row = queries + (h * R + r) * D;
      if constexpr (scaled) {
        f32x16 most = splat(0.0f);
        for (int d = 0; d < D; d += 16) most = max_of(most, magnitude(load<f32x16>(row + d) * q_factor));
        const word_scale words = word_scale_of(largest_lane(most));
        query_steps[h * R + r] = words.step;
        auto* const word_row = reinterpret_cast<std::int16_t*>(scaled_row);
        for (int d = 0; d < D; d += 16)
          store_words(word_row + d, rounded(load<f32x16>(row + d) * (q_factor * words.to_words)));
        for (int d = D; d < 32 * word_vectors; ++d) word_row[d] = 0;
      } else {
        for (int d = 0; d < D; d += 16) store(scaled_row + d, load<f32x16>(row + d) * q_factor);
      }
      float* row_out = out + (h * R + r) * D;
      for (int d = 0; d < D; d += 16) store(row_out + d, splat(0.0f));
      max_sum[(h * R + r) * 2] = minus_infinity;
      max_sum[(h * R + r) * 2 + 1] = 0.0f;
    }

  for (int i = 0; i < own_chunks; ++i) {
    const int c0 = start + i * chunk_size;
    const chunk_rows& chunk = chunks[i % (ahead + 1)];
    chunk_rows& next = chunks[(i + ahead) % (ahead + 1)];
    rows_of_chunk(i + ahead, next);
    // The chunk chunks_fetched_ahead on fetched into L2 while this one is used, each key's rows of
    // every kv head in address order (the order DRAM streams best), kv head h's products taking the
    // keys [h, h + 1) x per_head's with them, spread over its passes over the chunk's keys (q.k's and
    // p.V's).
    const int per_head = (next.keys + KVH - 1) / KVH;
    for (int h = 0; h < KVH; ++h) {
      const std::int64_t k_head = h * p.k_head * bytes, v_head = h * p.v_head * bytes;
      const int fetch_end = (h + 1) * per_head < next.keys ? (h + 1) * per_head : next.keys;
      const int fetches = fetch_end > h * per_head ? (fetch_end - h * per_head) * lines_per_key : 0;
      const int key_passes = chunk.keys * (1 + (rows + 3) / 4 * value_passes<E, D>());
      const int fetches_per_key = key_passes > 0 ? (fetches + key_passes - 1) / key_passes : 0;
      int fetch_key = h * per_head, fetched_line = 0;
      auto fetch = [&](int keys) {
        for (int n = 0; n < keys * fetches_per_key && fetch_key < fetch_end; ++n) {
          fetch_line(next, fetch_key, fetched_line);
          if (++fetched_line == lines_per_key) fetched_line = 0, ++fetch_key;
        }
      };
      const float* q_rows = queries + h * R * D;

      // q.k and the online softmax's scores: each key's row against the rows, its sums in the key's
      // slot, a group's slots folded into the scores of its 16 keys.
      f32x16 scores[max_rows][groups];
      for (int g = 0; g < groups; ++g) {
        const int first = g * group_keys, keys = chunk.keys - first < group_keys ? chunk.keys - first : group_keys;
        if (keys <= 0) {
          for (int r = 0; r < rows; ++r) scores[r][g] = splat(minus_infinity);
          continue;
        }
        for (int t = 0; t < keys; ++t) {
          fetch(1);
          const unsigned char* row = chunk.k[first + t] + k_head;
          if constexpr (scaled) {
            i16x32 k_words[word_vectors];
#pragma GCC unroll 8
            for (int i = 0; i < D / 32; ++i) k_words[i] = widen_to_words<32>(row + 32 * i);
            if constexpr (D % 32 != 0) k_words[D / 32] = widen_to_words<16>(row + 32 * (D / 32));
            for (int r = 0; r < rows; ++r) {
              const auto* q_words = reinterpret_cast<const std::int16_t*>(q_rows + r * D);
              i32x16 even{}, odd{};
#pragma GCC unroll 8
              for (int i = 0; i < word_vectors; ++i) {
                i32x16& sum = i % 2 == 0 ? even : odd;
                sum = add_pair_products(sum, k_words[i], load<i16x32>(q_words + 32 * i));
              }
              integer_sums[r * group_keys + slot_of(t)] = even + odd;
            }
          } else {
            f32x16 k_row[vectors];
#pragma GCC unroll 16
            for (int i = 0; i < vectors; ++i) k_row[i] = widen<E>(row + i * 16 * bytes);
            for (int r = 0; r < rows; ++r) {
              const float* q_row = q_rows + r * D;
              f32x16 even = k_row[0] * load<f32x16>(q_row), odd = splat(0.0f);
#pragma GCC unroll 16
              for (int i = 1; i < vectors; ++i) {
                f32x16& sum = i % 2 == 0 ? even : odd;
                sum = fma_of(k_row[i], load<f32x16>(q_row + i * 16), sum);
              }
              sums[r * group_keys + slot_of(t)] = even + odd;
            }
          }
        }
        for (int t = keys; t < group_keys; ++t)
          for (int r = 0; r < rows; ++r) {
            if constexpr (scaled)
              integer_sums[r * group_keys + slot_of(t)] = i32x16{};
            else
              sums[r * group_keys + slot_of(t)] = splat(0.0f);
          }
        const i32x16 key = i32x16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15} + (c0 + first);
        f32x16 k_scales = splat(1.0f);
        if constexpr (scaled) {
          k_scales = splat(0.0f);
          for (int t = 0; t < keys; ++t) k_scales[t] = chunk.k_scale[first + t][h * p.ks_head];
        }
        for (int r = 0; r < rows; ++r) {
          f32x16 score;
          if constexpr (scaled)
            score = float_of(lane_sums(integer_sums + r * group_keys)) * (k_scales * query_steps[h * R + r]);
          else
            score = lane_sums(sums + r * group_keys);
          scores[r][g] = key < key_end[r] ? score : splat(minus_infinity);
        }
      }

      // The online softmax: each row's weights, and the factor its output so far is rescaled by.
      f32x16 v_scales[groups];
      if constexpr (scaled)
        for (int g = 0; g < groups; ++g) {
          v_scales[g] = splat(0.0f);
          for (int t = g * group_keys; t < chunk.keys && t < (g + 1) * group_keys; ++t)
            v_scales[g][t - g * group_keys] = chunk.v_scale[t][h * p.vs_head];
        }
      float rescale[max_rows], weight_steps[max_rows];
      for (int r = 0; r < rows; ++r) {
        f32x16 most = scores[r][0];
        for (int g = 1; g < groups; ++g) most = max_of(most, scores[r][g]);
        float* const state = max_sum + (h * R + r) * 2;
        const float chunk_max = largest_lane(most);
        const float new_max = chunk_max > state[0] || chunk_max != chunk_max ? chunk_max : state[0];
        rescale[r] = 1.0f;
        f32x16 weight[groups];
        for (f32x16& w : weight) w = splat(0.0f);
        if (new_max != minus_infinity) {
          rescale[r] = state[0] == minus_infinity ? 0.0f : std::exp2(state[0] - new_max);
          f32x16 total = splat(0.0f);
          for (int g = 0; g < groups; ++g) {
            weight[g] = scores[r][g] == minus_infinity ? splat(0.0f) : exp2_of(scores[r][g] - new_max);
            total += weight[g];
          }
          state[0] = new_max;
          state[1] = state[1] * rescale[r] + lane_total(total);
        }
        if constexpr (scaled) {
          f32x16 heaviest = splat(0.0f);
          for (int g = 0; g < groups; ++g) {
            weight[g] *= v_scales[g];
            heaviest = max_of(heaviest, weight[g]);
          }
          const word_scale words = word_scale_of(largest_lane(heaviest));
          weight_steps[r] = words.step;
          for (int g = 0; g < groups; ++g)
            store_words(word_weights + r * chunk_keys + g * group_keys, rounded(weight[g] * words.to_words));
        } else {
          for (int g = 0; g < groups; ++g) store(weights + r * chunk_keys + g * group_keys, weight[g]);
        }
      }

      // p.V, four rows at a time.
      float* const head_out = out + h * R * D;
      for (int r0 = 0; r0 < rows; r0 += 4)
        with_rows(rows - r0 < 4 ? rows - r0 : 4, [&]<int N>() {
          if constexpr (scaled)
            add_value_words<D, N>(chunk, v_head, word_weights + r0 * chunk_keys, weight_steps + r0, head_out + r0 * D,
                                  rescale + r0, fetch);
          else
            add_values<E, D, N>(chunk, v_head, weights + r0 * chunk_keys, head_out + r0 * D, rescale + r0, fetch);
        });
    }
  }

  for (int h = 0; h < KVH; ++h)
    for (int r = 0; r < rows; ++r) {
      const std::size_t at = c.state_of(task, h, r);
      std::memcpy(c.partial_out + at * D, out + (h * R + r) * D, D * sizeof(float));
      const float* state = max_sum + (h * R + r) * 2;
      c.partial_max_sum[at * 2] = state[0] * ln2;
      c.partial_max_sum[at * 2 + 1] = state[1];
    }
}

template <dtype E, std::size_t... N>
void decode_task_of_dim(const call& c, int task, int following, bool leading_fetched, unsigned char* scratch,
                        std::index_sequence<N...>) {
  ((c.p.head_dim == head_dims[N] ? decode_task<E, head_dims[N]>(c, task, following, leading_fetched, scratch) : void()),
   ...);
}

/// Tasks are taken one ahead of their use, so that each task's last chunks can fetch the next one's
/// first.
template <dtype E>
void run_tasks(call* c, unsigned char* scratch) {
  auto take = [c] { return __atomic_fetch_add(&c->next_task, 1, __ATOMIC_RELAXED); };
  bool leading_fetched = false;
  for (int task = take(); task < c->tasks;) {
    const int taken = take(), following = taken < c->tasks ? taken : -1;
    decode_task_of_dim<E>(*c, task, following, leading_fetched, scratch, std::make_index_sequence<std::size(head_dims)>{});
    leading_fetched = following >= 0;
    task = taken;
  }
}

/// A worker of `c`: takes tasks until none is left, in `scratch` (scratch_for's bytes, 64-byte aligned).
inline void run_worker(call* c, unsigned char* scratch) {
  switch (c->p.kv_element) {
    case dtype::bf16: run_tasks<dtype::bf16>(c, scratch); break;
    case dtype::f16: run_tasks<dtype::f16>(c, scratch); break;
    case dtype::i8: run_tasks<dtype::i8>(c, scratch); break;
    default: run_tasks<dtype::f32>(c, scratch); break;
  }
}

}  // namespace
}  // namespace attngen::vector_decode

#pragma GCC diagnostic pop
