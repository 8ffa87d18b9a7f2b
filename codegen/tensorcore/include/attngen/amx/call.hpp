#pragma once
/// What the runtime and a kernel's AMX forward pass (NAME_amx.cpp, attngen/amx/flash_forward.hpp)
/// agree on: one call's parameters and tasks, and the scratch memory each worker brings. Plain C++,
/// compiled without AMX or AVX-512 wherever it is included.

#include <cstddef>
#include <cstdint>

#include "attngen/tensorcore/launch_shape.hpp"
#include "attngen/tensorcore/variant_inputs.hpp"

namespace attngen::amx {

/// Rows (query, head pairs of one kv head's group) that one q.kᵀ and p.V step computes: two tiles of 16.
inline constexpr int group_rows = 32;
/// The most row groups a task holds: each key block's K and V are packed once for all of them. A
/// call's tasks hold as many as keep its threads busy (choose_task_groups); prefill_gqa_bf16 on one
/// thread of a 2-core Intel Xeon (2026-11-28): 4 groups 280, 8 groups 366, 16 groups 420 GFLOP/s.
inline constexpr int max_task_groups = 16;
/// Keys per block: a tile row of 32 bf16.
inline constexpr int block_keys = 32;
/// Bytes of an AMX tile as the kernel configures every one: 16 rows of 64 bytes.
inline constexpr int tile_bytes = 1024;

/// One call: q, k, v and out are bf16 (B, L, heads, D) tensors (forward_params), the variant's inputs
/// as for the tensor-core kernels. Tasks are (batch, kv head, task_groups * group_rows rows of the
/// group's Lq * H / KVH rows) in that order; workers take them in turn through `next_task`.
struct forward_call {
  tensorcore::forward_params params;
  tensorcore::variant_state variant;
  int task_groups = 1;
  int tasks = 0;
  int next_task = 0;  ///< taken with __atomic_fetch_add
};

/// A kernel's worker: runs tasks of `call` until none is left, in `scratch` (scratch_for(head dim)
/// bytes, 64-byte aligned, its own).
using forward_worker = void (*)(forward_call* call, void* scratch);

/// Tasks of a call whose tasks hold `task_groups` row groups: every row of every (batch, kv head).
inline int forward_tasks(const tensorcore::forward_params& p, int task_groups) {
  const std::int64_t rows = std::int64_t(p.query_length) * (p.heads / p.kv_heads);
  const std::int64_t rows_per_task = std::int64_t(task_groups) * group_rows;
  return int(p.batch * p.kv_heads * ((rows + rows_per_task - 1) / rows_per_task));
}

/// The most row groups per task (a power of two up to max_task_groups) that still gives each of
/// `threads` threads 4 tasks, else 1.
inline int choose_task_groups(const tensorcore::forward_params& p, int threads) {
  int groups = max_task_groups;
  while (groups > 1 && forward_tasks(p, groups) < 4 * threads) groups /= 2;
  return groups;
}

/// The scratch of one worker for head dim `head_dim`: q's tiles and the output of the task's rows,
/// a key block's packed V and padded K, its scores and weights.
struct scratch_layout {
  std::size_t q_tiles, out_tiles, v_tiles, k_rows, scores, weights, bytes;
};
constexpr scratch_layout scratch_for(int head_dim) {
  const std::size_t q = std::size_t(max_task_groups) * (head_dim / 32) * 2 * tile_bytes;
  const std::size_t out = std::size_t(max_task_groups) * (head_dim / 16) * 2 * tile_bytes;
  const std::size_t v = std::size_t(head_dim / 16) * tile_bytes;
  const std::size_t k = std::size_t(block_keys) * head_dim * 2;
  const std::size_t scores = std::size_t(block_keys) * group_rows * 4;
  const std::size_t weights = 2 * tile_bytes;
  return {0, q, q + out, q + out + v, q + out + v + k, q + out + v + k + scores, q + out + v + k + scores + weights};
}

}  // namespace attngen::amx
