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

/// One call's tensors and sizes. q (B, Lq, H, D), k (B, Lk, KVH, D), v (B, Lk, KVH, D) and out
/// (B, Lq, H, D) hold elements of the kernel's storage type (16-bit, or f32); lse, when not null, is
/// (B, H, Lq) f32 with strides {lse_batch_stride, lse_head_stride, 1}. q and out rows are aligned
/// to two elements, K and V rows to 16 bytes (cp.async, and 4 f32 elements at a time).
struct forward_params {
  const void* q;
  const void* k;
  const void* v;
  void* out;
  float* lse;
  sequence_strides q_strides, k_strides, v_strides, out_strides;
  std::int64_t lse_batch_stride, lse_head_stride;
  int batch, heads, kv_heads, query_length, key_length;
  float scale;
};

/// Rows (query, head pairs) per warp: the m of mma.sync m16n8k16.
inline constexpr int rows_per_warp = 16;
/// Keys per staged tile, and tiles in flight (the one computed and the next).
inline constexpr int tile_keys = 64, tile_stages = 2;
/// Shared memory rows padded by 16 bytes, so the 8 rows one ldmatrix reads start in distinct banks.
constexpr int shared_row_stride(int head_dim) { return head_dim + 8; }
/// Dynamic shared memory of a block: the K and V tiles of every stage; with f32 tensors
/// (`rounds_f32`), one stage of 16-bit K and V tiles and the next tile's f32 rows in flight.
constexpr unsigned forward_shared_bytes(int head_dim, bool rounds_f32) {
  const unsigned tile_bytes = unsigned(2 * tile_keys * shared_row_stride(head_dim)) * 2u;
  return rounds_f32 ? tile_bytes + unsigned(2 * tile_keys * head_dim) * 4u : tile_stages * tile_bytes;
}

/// The block's shape for head_dim D, W warps, and 16-bit or f32 (RoundsF32) tensors.
template <int D, int W, bool RoundsF32>
struct forward_tiles {
  static_assert(D % 16 == 0, "the tensor-core path takes head dims that are multiples of 16");
  static constexpr int warps = W;
  static constexpr int rows = rows_per_warp * W;
  static constexpr int keys = tile_keys;
  static constexpr int shared_row_stride = tensorcore::shared_row_stride(D);
  static constexpr int stages = RoundsF32 ? 1 : tile_stages;
  static constexpr int tile_elements = keys * shared_row_stride;
  static constexpr unsigned shared_bytes = forward_shared_bytes(D, RoundsF32);
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
/// `rows`: forward_tiles<D, W>::rows of the kernel.
ATTNGEN_TC_SHAPE_FN grid3 forward_grid(const forward_params& p, int rows) {
  const block_rows shape = rows_of_block(p.heads / p.kv_heads, rows);
  return {(p.query_length + shape.queries - 1) / shape.queries, p.kv_heads * shape.head_chunks, p.batch};
}

}  // namespace attngen::tensorcore
