#pragma once
/// Decoding on the CPU's vector registers (attngen/vector_decode/decode_task.hpp): which descriptions
/// it takes, one call's parameters and tasks, a worker's scratch, and the merge of a sequence's tasks.
/// Plain C++, compiled for the runtime's own target wherever it is included.
///
/// The path exists for the calls where time is the cache's bytes: a few rows per kv head (a decoding
/// step, or a few speculative tokens) over a dense or paged cache of f32, bf16, f16 or int8. The whole
/// batch is one call, split into tasks of task_keys keys of one sequence (every kv head in each), so
/// that both cores stream the cache whatever the sequences' lengths.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "attngen/attention.hpp"

namespace attngen::vector_decode {

/// Rows (a sequence's queries x the group's heads) of one kv head a call may have: 8 speculative tokens
/// of a group of 8, or one step of multi-query attention of 64 heads. A key row, widened once, meets
/// every row, their sums kept in the scratch; more rows are prefill's shape, the Halide code's.
inline constexpr int max_rows = 64;
/// Keys whose sums fold into one vector of scores per row.
inline constexpr int group_keys = 16;
/// Keys of one step of the online softmax, for one kv head: its row maximum, exponentials and sum
/// cost about what 64 keys' products do, so fewer keys a step would double them; and the most keys
/// whose rows (every kv head's) are fetched into L2 ahead of their use.
inline constexpr int chunk_keys = 64;
/// Keys of a step over a cache of `element`s: 32 for f32, so that a chunk and the one fetched ahead
/// stay well within a core's L2 (2 x 512 KiB at decode_paged's KVH 8 D 128 with 64).
constexpr int keys_per_chunk(dtype element) { return element == dtype::f32 ? 32 : chunk_keys; }
/// Chunks whose rows are fetched into L2 ahead of the one in use. The fetches are spread over q.k's
/// and p.V's passes over the chunk's keys, so that they seldom find every line fill buffer taken
/// (2-core Xeon, decode_paged from DRAM, new / old time in two paired runs: f32 0.82 and 0.87, bf16
/// 0.90 and 0.94, 4 of 4 rounds faster each; int8, fetched 1 chunk ahead instead of 2 beside q.k
/// alone, 0.87 and 0.94).
inline constexpr int chunks_fetched_ahead = 1;
/// Keys of one task, merged after.
inline constexpr int task_keys = 512;
/// The head dims it is compiled for (a row is held in registers).
inline constexpr int head_dims[] = {64, 80, 96, 128, 192, 256};

constexpr bool compiled_for_head_dim(int head_dim) {
  for (int compiled : head_dims)
    if (compiled == head_dim) return true;
  return false;
}

/// Why the path does not take `d` (static text), or null when it does. Calls it does not take run the
/// kernel's Halide code, as do calls with a sequence of more than max_rows rows per kv head and calls
/// on CPUs without AVX-512.
constexpr const char* refusal(const attention_desc& d) {
  if (d.element_type != dtype::f32) return "the vector decoding path takes f32 queries";
  if (d.effective_v_head_dim() != d.qk_head_dim) return "v_head_dim differs from head_dim";
  if (!compiled_for_head_dim(d.qk_head_dim))
    return "head_dim is not one the vector decoding path is compiled for (head_dims)";
  if (d.has_score_mod() || d.has_mask_mod() || d.has_additive_mask() || d.has_key_padding_mask() ||
      d.global_positions || d.backward)
    return "modifiers, masks, global positions and the backward run the Halide code";
  if (d.group_size() > max_rows) return "groups of more query heads than max_rows run the Halide code";
  return nullptr;
}

/// One call's tensors. Strides are in elements; head_dim is contiguous in q, out, k and v. Sequence b's
/// queries are q_offsets[b] .. q_offsets[b + 1] - 1 of the packed rows (ragged), or b's Lq rows (dense).
/// Its keys lie in a dense cache (page_size 0: key t at k + b k_outer + t k_token) or a paged one (key
/// t in page page_table[b table_stride + t / page_size], at row t % page_size).
struct params {
  int batch = 0, query_length = 0, heads = 0, kv_heads = 0, head_dim = 0;
  dtype kv_element = dtype::f32;
  int page_size = 0;
  int key_capacity = 0;  ///< keys a dense cache's rows hold (its Lk); every sequence's count without kv_lengths
  float scale = 1.0f;
  causal_alignment causal = causal_alignment::none;
  const std::int32_t* q_offsets = nullptr;  ///< ragged queries: (batch + 1)
  const float* q = nullptr;
  std::int64_t q_batch = 0, q_query = 0, q_head = 0;
  float* out = nullptr;
  std::int64_t out_batch = 0, out_query = 0, out_head = 0;
  float* lse = nullptr;  ///< (B, H, Lq) or, ragged, (H, total_q); or null
  std::int64_t lse_batch = 0, lse_head = 0, lse_query = 0;
  const float* sinks = nullptr;  ///< (H), or null
  const void* k = nullptr;
  const void* v = nullptr;
  std::int64_t k_outer = 0, k_token = 0, k_head = 0, v_outer = 0, v_token = 0, v_head = 0;
  const float* k_scale = nullptr;  ///< int8 caches
  const float* v_scale = nullptr;
  std::int64_t ks_outer = 0, ks_token = 0, ks_head = 0, vs_outer = 0, vs_token = 0, vs_head = 0;
  const std::int32_t* page_table = nullptr;
  std::int64_t table_stride = 0;
  const std::int32_t* kv_lengths = nullptr;  ///< (B), or null

  int group() const { return heads / kv_heads; }
  int queries_of(int b) const { return q_offsets != nullptr ? q_offsets[b + 1] - q_offsets[b] : query_length; }
  /// The packed row (ragged) or the batch index's offset (dense) of sequence b's first query, times
  /// the given strides: where its rows of q, out or lse start.
  std::int64_t first_row(int b, std::int64_t batch_stride, std::int64_t query_stride) const {
    return q_offsets != nullptr ? q_offsets[b] * query_stride : b * batch_stride;
  }
  /// Rows of one kv head: query-major, head-minor (row r is query r / group, head r % group).
  int rows_of(int b) const { return queries_of(b) * group(); }
  int keys_of(int b) const { return kv_lengths != nullptr ? kv_lengths[b] : key_capacity; }
  /// The keys row r of sequence b sees: [0, key_end), by causality and the sequence's length.
  int key_end(int b, int r) const {
    const int keys = keys_of(b), query = r / group();
    int end = keys;
    if (causal == causal_alignment::top_left) end = query + 1;
    if (causal == causal_alignment::bottom_right) end = keys - queries_of(b) + query + 1;
    return end < 0 ? 0 : end < keys ? end : keys;
  }
  /// The keys any row of sequence b sees.
  int keys_seen(int b) const {
    const int rows = rows_of(b);
    return rows == 0 ? 0 : key_end(b, rows - 1);
  }
};

/// Tasks of sequence b: the keys its rows see, in task_keys blocks.
inline int tasks_of(const params& p, int b) { return (p.keys_seen(b) + task_keys - 1) / task_keys; }

/// Where a task's keys lie: its sequence b and the keys [start, end) that any of its rows sees.
struct task_span {
  int b = 0, start = 0, end = 0;
};

/// The most rows of one kv head any sequence of the call has (at least 1): the rows a kv head's
/// partial results and scratch hold.
inline int row_capacity_of(const params& p) {
  int most = 1;
  for (int b = 0; b < p.batch; ++b) most = p.rows_of(b) > most ? p.rows_of(b) : most;
  return most;
}

/// One call: its tasks (sequence b's are first_task[b] .. first_task[b + 1] - 1, each of task_keys
/// keys from (task - first_task[b]) x task_keys) and their partial results, per task, kv head and
/// row (row_capacity a kv head): the unnormalised output (head_dim), the maximum and the sum.
struct call {
  params p;
  int row_capacity = 1;             ///< row_capacity_of(p), at most max_rows
  const int* first_task = nullptr;  ///< batch + 1 entries
  int tasks = 0;
  float* partial_out = nullptr;      ///< (tasks, kv_heads, row_capacity, head_dim)
  float* partial_max_sum = nullptr;  ///< (tasks, kv_heads, row_capacity, 2): natural-log units
  int next_task = 0;                 ///< taken with __atomic_fetch_add

  std::size_t state_of(int task, int kv_head, int row) const {
    return (std::size_t(task) * p.kv_heads + kv_head) * row_capacity + row;
  }
  task_span span_of(int task) const {
    int b = 0;
    while (first_task[b + 1] <= task) ++b;
    const int start = (task - first_task[b]) * task_keys, seen = p.keys_seen(b);
    return {b, start, seen < start + task_keys ? seen : start + task_keys};
  }
};

/// A worker's scratch for head dim D, kv_heads and row_capacity rows a kv head: offsets in bytes, each
/// 64-byte aligned.
struct scratch_layout {
  std::size_t queries, query_steps, out, max_sum, sums, weights, bytes;
};
constexpr scratch_layout scratch_for(int head_dim, int kv_heads, int row_capacity) {
  auto aligned = [](std::size_t n) { return (n + 63) / 64 * 64; };
  scratch_layout s{};
  std::size_t at = 0;
  auto take = [&](std::size_t& field, std::size_t bytes) {
    field = at;
    at += aligned(bytes);
  };
  const std::size_t states = std::size_t(kv_heads) * row_capacity;
  take(s.queries, states * head_dim * 4);
  take(s.query_steps, states * 4);
  take(s.out, states * head_dim * 4);
  take(s.max_sum, states * 2 * 4);
  take(s.sums, std::size_t(row_capacity) * group_keys * 16 * 4);
  take(s.weights, std::size_t(row_capacity) * chunk_keys * 4);
  s.bytes = at;
  return s;
}

/// Sequence b's rows of the output (and log-sum-exp) from its tasks' partial results and the head's
/// sink: out = sum_j e^(s_j) v_j / (e^sink + sum_j e^(s_j)), the log-sum-exp that denominator's log.
/// Rows that saw no key get 0 (and -inf, or the sink), as everywhere in attngen.
inline void merge_sequence(const call& c, int b) {
  const params& p = c.p;
  const int rows = p.rows_of(b), D = p.head_dim, group = p.group();
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  for (int h = 0; h < p.kv_heads; ++h)
    for (int r = 0; r < rows; ++r) {
      const int query = r / group, head = h * group + r % group;
      const float sink = p.sinks != nullptr ? p.sinks[head] : minus_infinity;
      float most = sink;
      for (int t = c.first_task[b]; t < c.first_task[b + 1]; ++t) {
        const float m = c.partial_max_sum[c.state_of(t, h, r) * 2];
        most = m > most || m != m ? m : most;
      }
      float* out = p.out + p.first_row(b, p.out_batch, p.out_query) + query * p.out_query + head * p.out_head;
      for (int d = 0; d < D; ++d) out[d] = 0.0f;
      float sum = 0.0f;
      if (most != minus_infinity) {
        if (sink != minus_infinity) sum = std::exp(sink - most);
        for (int t = c.first_task[b]; t < c.first_task[b + 1]; ++t) {
          const std::size_t at = c.state_of(t, h, r);
          const float m = c.partial_max_sum[at * 2];
          if (m == minus_infinity) continue;
          const float weight = std::exp(m - most);
          sum += weight * c.partial_max_sum[at * 2 + 1];
          const float* part = c.partial_out + at * D;
          for (int d = 0; d < D; ++d) out[d] += weight * part[d];
        }
      }
      // A NaN in the cache or its scales reaches the output as NaN.
      if (!(sum == 0.0f))
        for (int d = 0; d < D; ++d) out[d] /= sum;
      if (p.lse != nullptr)
        p.lse[p.first_row(b, p.lse_batch, p.lse_query) + head * p.lse_head + query * p.lse_query] =
            sum == 0.0f ? minus_infinity : most + std::log(sum);
    }
}

}  // namespace attngen::vector_decode
