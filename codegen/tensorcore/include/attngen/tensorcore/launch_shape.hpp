#pragma once
/// What the code that launches a tensor-core forward kernel and the kernel agree on: the call's
/// parameters, the block's tiles and the grid. Plain C++ for the host (the runtime, the tests) and
/// nvcc.

#include <cstdint>

#if defined(__CUDACC__)
#define ATTNGEN_TC_SHAPE_FN __host__ __device__ inline
#else
#define ATTNGEN_TC_SHAPE_FN inline
#endif

namespace attngen::tensorcore {

/// Element strides of a (batch, length, heads, head_dim) tensor, head_dim contiguous.
struct sequence_strides {
  std::int64_t batch, position, head;
};

/// A call's KV-cache layouts (docs/kv-cache.md); every pointer null for dense tensors of equal lengths.
struct sequence_layout {
  /// (B + 1) int32, or null: ragged queries. Sequence b's queries are rows offsets[b] to
  /// offsets[b + 1] of q and out (total_q, H, D) and lse (H, total_q), whose batch strides are 0.
  const std::int32_t* query_offsets;
  /// (B) int32, or null: sequence b's keys are its first kv_lengths[b] (key_length for all without).
  const std::int32_t* kv_lengths;
  /// (B, max_pages) int32 with rows page_table_stride apart, or null: K and V are pools (num_pages,
  /// page_size, KVH, D) whose batch stride is a page's, key j of sequence b at row j % page_size of
  /// page page_table[b][j / page_size]; page_size is 1 << page_size_log2.
  const std::int32_t* page_table;
  std::int64_t page_table_stride;
  int page_size_log2;
};

/// The element type of a kernel's K and V (its cache): the tensor cores' own 16-bit type, staged as it
/// is, or one converted to it as it is staged (f32, the other 16-bit type, int8 times its scale).
enum class cache_element : std::uint8_t { bf16, f16, f32, i8 };
ATTNGEN_TC_SHAPE_FN constexpr int bytes_of(cache_element c) { return c == cache_element::f32 ? 4 : c == cache_element::i8 ? 1 : 2; }

/// One call's tensors and sizes. q (B, Lq, H, D) and out (B, Lq, H, Dv) hold elements of the kernel's
/// storage type (16-bit, or f32), k (B, Lk, KVH, D) and v (B, Lk, KVH, Dv) elements of its cache type;
/// lse, when not null, is (B, H, Lq) f32 with strides {lse_batch_stride, lse_head_stride, 1}. q and
/// out rows are aligned to two elements, K and V rows to 16 bytes (cp.async). An int8 cache has f32
/// scales, one per (token, kv head): k_scale and v_scale, laid out as K's and V's tokens
/// (k_scale_strides' batch and position strides, a page's and a token's in a paged cache) with
/// `head` between kv heads; null for other caches. With a `layout`, query_length and key_length
/// bound every sequence's (the grid covers query_length) and the tensors are laid out as
/// sequence_layout says.
struct forward_params {
  const void* q;
  const void* k;
  const void* v;
  void* out;
  float* lse;
  sequence_strides q_strides, k_strides, v_strides, out_strides;
  const float* k_scale;
  const float* v_scale;
  sequence_strides k_scale_strides, v_scale_strides;
  std::int64_t lse_batch_stride, lse_head_stride;
  int batch, heads, kv_heads, query_length, key_length;
  float scale;
  sequence_layout layout;
  /// Keys split across this many blocks of each (query tile, kv head, batch entry), as FlashDecoding
  /// does for calls with too few blocks to fill the GPU: each block writes its rows' output over its
  /// share of the keys, normalised, and their log-sum-exp to `partial` (f32, split_workspace_floats
  /// of them), and the merge (split_merge.hpp) combines them with the sinks into out and lse. 0 or 1
  /// (and `partial` null): every block sees all its keys.
  int key_splits;
  float* partial;
};

/// Blocks each (query tile, kv head, batch entry) of a call splits its keys across.
ATTNGEN_TC_SHAPE_FN int splits_of(const forward_params& p) { return p.key_splits > 1 ? p.key_splits : 1; }
/// Rows of `partial`: (split, batch, head, query) over the call's query_length.
ATTNGEN_TC_SHAPE_FN std::int64_t split_rows(const forward_params& p) {
  return std::int64_t(splits_of(p)) * p.batch * p.heads * p.query_length;
}
ATTNGEN_TC_SHAPE_FN std::int64_t split_row(const forward_params& p, int split, int batch, int head, int query) {
  return ((std::int64_t(split) * p.batch + batch) * p.heads + head) * p.query_length + query;
}
/// `partial`'s size for v_head_dim Dv: each row's Dv outputs, then every row's log-sum-exp.
ATTNGEN_TC_SHAPE_FN std::int64_t split_workspace_floats(const forward_params& p, int v_head_dim) {
  return split_rows(p) * (v_head_dim + 1);
}

/// The sequence of one batch entry: its queries and keys, and its first row in q, out, lse and a
/// mask over the packed queries (0 without ragged queries). The variants' hooks take it: causality
/// and the modifiers' q_len and kv_len are the sequence's own.
struct sequence_extent {
  int queries, keys, first_row;
};
ATTNGEN_TC_SHAPE_FN sequence_extent extent_of(const forward_params& p, int batch) {
  const sequence_layout& l = p.layout;
  sequence_extent s{p.query_length, p.key_length, 0};
  if (l.query_offsets != nullptr) {
    s.first_row = l.query_offsets[batch];
    s.queries = l.query_offsets[batch + 1] - s.first_row;
  }
  if (l.kv_lengths != nullptr) s.keys = l.kv_lengths[batch];
  return s;
}

/// Where key `key` of sequence `batch` starts in a K or V tensor of `strides` (kv head 0).
ATTNGEN_TC_SHAPE_FN std::int64_t key_row_offset(const forward_params& p, const sequence_strides& strides, int batch,
                                                int key) {
  const sequence_layout& l = p.layout;
  if (l.page_table == nullptr) return batch * strides.batch + std::int64_t(key) * strides.position;
  const std::int64_t page = l.page_table[batch * l.page_table_stride + (key >> l.page_size_log2)];
  return page * strides.batch + std::int64_t(key & ((1 << l.page_size_log2) - 1)) * strides.position;
}

/// Where row `query` of sequence `batch` (extent `s`) starts in a q or out tensor of `strides`
/// (head 0).
ATTNGEN_TC_SHAPE_FN std::int64_t query_row_offset(const sequence_strides& strides, int batch, const sequence_extent& s,
                                                  int query) {
  return batch * strides.batch + std::int64_t(s.first_row + query) * strides.position;
}

/// Rows (query, head pairs) per warp: the m of mma.sync m16n8k16.
inline constexpr int rows_per_warp = 16;
/// The largest head dim (of q and k, and of v) the tensor cores take, and the largest whose q
/// fragments stay in registers for the whole kernel. Past it the output's accumulators alone are
/// Dv / 2 registers a thread at Dv = D, so each warp keeps its q rows in shared memory and reads one
/// 16-column chunk at a time (FlashAttention-2 does the same at D 256).
inline constexpr int largest_head_dim = 256, largest_head_dim_with_q_in_registers = 128;
ATTNGEN_TC_SHAPE_FN constexpr bool q_in_shared_memory(int head_dim) {
  return head_dim > largest_head_dim_with_q_in_registers;
}
/// Keys per staged tile for head dims D (q and k) and Dv (v): 64, or 32 where either passes 128, so
/// that two stages of K and V tiles and the q rows fit sm_80's 163 KiB of shared memory a block (99
/// KiB at D = Dv = 256, 130 over an f32 cache), and a tile's scores take 16 registers a thread, not
/// 32, beside the output's Dv / 2.
ATTNGEN_TC_SHAPE_FN constexpr int keys_per_tile(int head_dim, int v_head_dim) {
  return head_dim > largest_head_dim_with_q_in_registers || v_head_dim > largest_head_dim_with_q_in_registers ? 32
                                                                                                              : 64;
}
/// Tiles in flight: the one computed and the next.
inline constexpr int tile_stages = 2;
/// Shared memory rows padded by 16 bytes, so the 8 rows one ldmatrix reads start in distinct banks.
ATTNGEN_TC_SHAPE_FN constexpr int shared_row_stride(int head_dim) { return head_dim + 8; }
/// Bytes of a K or V element a kernel stages as it is read and converts (0 where the cache holds the
/// tensor cores' own type, staged as it is).
ATTNGEN_TC_SHAPE_FN constexpr int converted_bytes(cache_element cache, cache_element tensor_cores) {
  return cache == tensor_cores ? 0 : bytes_of(cache);
}
/// Dynamic shared memory of a block of `warps` warps for head dims D and Dv: the K and V tiles of
/// every stage; for a cache converted as it is staged (`converted` bytes an element), one stage of
/// 16-bit K and V tiles and the next tile's rows in flight, as they are read; then, past
/// largest_head_dim_with_q_in_registers, each warp's q rows.
ATTNGEN_TC_SHAPE_FN constexpr unsigned forward_shared_bytes(int head_dim, int v_head_dim, int warps, int converted) {
  const int keys = keys_per_tile(head_dim, v_head_dim);
  const unsigned tile_bytes = unsigned(keys * (shared_row_stride(head_dim) + shared_row_stride(v_head_dim))) * 2u;
  const unsigned kv_bytes = converted > 0 ? tile_bytes + unsigned(keys * (head_dim + v_head_dim) * converted)
                                          : tile_stages * tile_bytes;
  const unsigned q_bytes =
      q_in_shared_memory(head_dim) ? unsigned(warps * rows_per_warp * shared_row_stride(head_dim)) * 2u : 0u;
  return kv_bytes + q_bytes;
}

/// The block's shape for head dims D (q and k) and Dv (v and the output), W warps, and a cache
/// staged as it is (Converted 0) or converted from elements of Converted bytes. A stage holds a K
/// tile of rows k_row_stride apart, then a V tile of rows v_row_stride apart.
template <int D, int Dv, int W, int Converted>
struct forward_tiles {
  static_assert(D % 16 == 0 && D <= largest_head_dim && Dv % 16 == 0 && Dv <= largest_head_dim,
                "the tensor-core path takes head dims that are multiples of 16 up to 256");
  static constexpr int warps = W;
  static constexpr int rows = rows_per_warp * W;
  static constexpr int keys = keys_per_tile(D, Dv);
  static constexpr int k_row_stride = shared_row_stride(D), v_row_stride = shared_row_stride(Dv);
  static constexpr int stages = Converted > 0 ? 1 : tile_stages;
  static constexpr int k_tile_elements = keys * k_row_stride, v_tile_elements = keys * v_row_stride;
  static constexpr int stage_elements = k_tile_elements + v_tile_elements;
  static constexpr bool q_in_shared = q_in_shared_memory(D);
  static constexpr unsigned shared_bytes = forward_shared_bytes(D, Dv, W, Converted);
  /// Where (in 16-bit elements) warp w's q rows, k_row_stride apart, begin when q_in_shared.
  ATTNGEN_TC_SHAPE_FN static constexpr int q_rows_of_warp(int warp) {
    return int(shared_bytes / 2) - (W - warp) * rows_per_warp * k_row_stride;
  }
};

/// How a block's row slots map to (query, head): a block holds `heads` consecutive heads of one
/// kv head's group (all of them when the group fits) for `queries` consecutive queries, slot
/// r = (query - first query) * heads + (head - first head). Slots past queries * heads, heads
/// past the group and queries past Lq hold nothing.
struct block_rows {
  int heads, queries, head_chunks;
};
ATTNGEN_TC_SHAPE_FN block_rows rows_of_block(int group, int rows) {
  const int heads = group < rows ? group : rows;
  return {heads, rows / heads, (group + heads - 1) / heads};
}

/// The launch grid: x query tiles, y (kv head, head chunk), z batch.
struct grid3 {
  int x, y, z;
};

/// The rows block `block` holds of its sequence `s` (launched with `rows` rows a block): heads
/// first_head to last_head of one kv head's group, each for queries first_query to last_query (none
/// where last_query < first_query).
struct block_extent {
  int first_head, last_head, first_query, last_query;
};
ATTNGEN_TC_SHAPE_FN block_extent extent_of_block(const forward_params& p, int rows, grid3 block,
                                                 const sequence_extent& s) {
  const int group = p.heads / p.kv_heads;
  const block_rows shape = rows_of_block(group, rows);
  const int first_in_group = (block.y % shape.head_chunks) * shape.heads;
  const int heads = group - first_in_group < shape.heads ? group - first_in_group : shape.heads;
  const int first_head = block.y / shape.head_chunks * group + first_in_group;
  const int first_query = block.x / splits_of(p) * shape.queries;
  const int end_query = first_query + shape.queries < s.queries ? first_query + shape.queries : s.queries;
  return {first_head, first_head + heads - 1, first_query, end_query - 1};
}
/// `rows`: forward_tiles<D, Dv, W, Converted>::rows of the kernel. With key splits, x is (query tile, split), the
/// split minor.
ATTNGEN_TC_SHAPE_FN grid3 forward_grid(const forward_params& p, int rows) {
  const block_rows shape = rows_of_block(p.heads / p.kv_heads, rows);
  return {(p.query_length + shape.queries - 1) / shape.queries * splits_of(p), p.kv_heads * shape.head_chunks,
          p.batch};
}

/// Threads of a block of the merge of key splits (split_merge.hpp).
inline constexpr int merge_threads = 128;
/// The merge's grid for v_head_dim Dv: x the (row, feature pair) threads of a batch entry's rows
/// (query_length x heads), z the batch.
ATTNGEN_TC_SHAPE_FN grid3 merge_grid(const forward_params& p, int v_head_dim) {
  const std::int64_t threads = std::int64_t(p.query_length) * p.heads * (v_head_dim / 2);
  return {int((threads + merge_threads - 1) / merge_threads), 1, p.batch};
}

/// A split's share of a sequence's key tiles: tiles begin to end (of `tiles` in all).
struct split_tiles {
  int begin, end;
};
ATTNGEN_TC_SHAPE_FN split_tiles tiles_of_split(int tiles, int splits, int split) {
  const int per_split = (tiles + splits - 1) / splits;
  const int begin = split * per_split < tiles ? split * per_split : tiles;
  return {begin, begin + per_split < tiles ? begin + per_split : tiles};
}

/// Each split's least share of the longest sequence's key tiles, and the most splits.
inline constexpr int least_split_tiles = 2, most_key_splits = 32;
/// The key splits for a call (p.key_splits ignored) of a kernel with `rows` rows a block and tiles of
/// `keys` keys (keys_per_tile) on a GPU of `multiprocessors`: 1 where the call's blocks fill every
/// multiprocessor, else enough splits that they do, each of at least least_split_tiles tiles of the
/// longest sequence's keys.
ATTNGEN_TC_SHAPE_FN int key_splits_for(const forward_params& p, int rows, int keys, int multiprocessors) {
  forward_params one = p;
  one.key_splits = 1;
  const grid3 grid = forward_grid(one, rows);
  const long long blocks = (long long)grid.x * grid.y * grid.z;
  if (blocks <= 0 || blocks >= multiprocessors) return 1;
  const int key_tiles = (p.key_length + keys - 1) / keys;
  const int wanted = int((multiprocessors + blocks - 1) / blocks);
  const int most = key_tiles / least_split_tiles < most_key_splits ? key_tiles / least_split_tiles : most_key_splits;
  return wanted < most ? wanted : most > 1 ? most : 1;
}

}  // namespace attngen::tensorcore
