#include "attngen/codegen/schedule_gpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace attngen::codegen {

using namespace Halide;

namespace {

// Shared memory every CUDA device (48 KiB without opting in, which Halide 14 cannot) and OpenCL
// device of note offers, less a margin for Halide's own scratch.
constexpr int shared_memory_budget = 44 * 1024;
// Threads stage each key or feature row this many elements at a time (one warp of a row).
constexpr int staging_threads = 32;
constexpr int largest_key_block = 32;
constexpr int smallest_key_block = 4;
constexpr int bytes_per_float = 4;

// Features of the output each thread accumulates: the widest power of two up to 8 that divides Dv, so
// no thread's slice reaches past Dv (the staged values cover exactly Dv).
int features_per_thread(int v_dim) {
  int features = 8;
  while (v_dim % features != 0) features /= 2;
  return features;
}

int largest_power_of_two_at_most(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// The running state lives in shared memory when the output's blocks compute it. With a log-sum-exp
// output, or when it would take more than half the shared memory (many rows of a wide Dv), it is its
// own kernel's output in device memory.
bool state_in_shared_memory(const attention_desc& desc, const blocking& tiles) {
  return !desc.lse_output &&
         3 * tiles.rows(desc) * desc.effective_v_head_dim() * bytes_per_float <= shared_memory_budget / 2;
}

int state_bytes(const attention_desc& desc, const blocking& tiles) {
  return state_in_shared_memory(desc, tiles) ? 3 * tiles.rows(desc) * desc.effective_v_head_dim() * bytes_per_float
                                             : 0;
}

// Whether the tile's scaled queries are staged in shared memory: with the state there (a kernel of
// its own reads them in both of its stages), and when they take at most a quarter of it.
bool stages_queries(const attention_desc& desc, const blocking& tiles) {
  return state_in_shared_memory(desc, tiles) &&
         tiles.rows(desc) * desc.qk_head_dim * bytes_per_float <= shared_memory_budget / 4;
}

// Staged keys and values of one block, and the scores and weights of a block in each of the two
// block-function sets.
int bytes_per_key(const attention_desc& desc, const blocking& tiles) {
  return (desc.qk_head_dim + desc.effective_v_head_dim() + 2 * 2 * tiles.rows(desc)) * bytes_per_float;
}

}  // namespace

bool is_gpu_target(const Target& target) {
  return target.has_feature(Target::CUDA) || target.has_feature(Target::OpenCL);
}

const char* gpu_api_name(const Target& target) { return target.has_feature(Target::CUDA) ? "cuda" : "opencl"; }

int gpu_shared_memory_bytes(const attention_desc& desc, const blocking& tiles) {
  const int rows = tiles.rows(desc);
  const int queries = stages_queries(desc, tiles) ? rows * desc.qk_head_dim * bytes_per_float : 0;
  // Per row: two block maxima and sums (one per block-function set).
  return state_bytes(desc, tiles) + queries + tiles.key_block * bytes_per_key(desc, tiles) +
         2 * 2 * rows * bytes_per_float;
}

blocking gpu_blocking(const attention_desc& desc) {
  blocking tiles;
  // Threads take one element each: no vector lanes, and causal tiles skip invisible keys one by one.
  tiles.lanes = 1;
  tiles.qk = qk_layout::keys_in_lanes;
  tiles.qk_key_group = 1;
  const int group = desc.group_size();
  tiles.queries_per_tile = std::max(1, 16 / group);
  // Fewer queries per tile where that keeps the state in shared memory (D 128 at 16 rows does not).
  while (!desc.lse_output && !state_in_shared_memory(desc, tiles) && tiles.queries_per_tile > 1)
    tiles.queries_per_tile /= 2;
  if (!state_in_shared_memory(desc, tiles)) tiles.queries_per_tile = std::max(1, 16 / group);
  // Halve the tile until the state and a smallest key block fit (large value head dims).
  while (tiles.queries_per_tile > 1) {
    tiles.key_block = smallest_key_block;
    if (gpu_shared_memory_bytes(desc, tiles) <= shared_memory_budget) break;
    tiles.queries_per_tile /= 2;
  }
  // The longest block that fits, within 1024 threads per block when each (key, row) is a thread.
  const int room = shared_memory_budget - state_bytes(desc, tiles) - 2 * 2 * tiles.rows(desc) * bytes_per_float -
                   (stages_queries(desc, tiles) ? tiles.rows(desc) * desc.qk_head_dim * bytes_per_float : 0);
  const int fitting = std::max(1, room / bytes_per_key(desc, tiles));
  tiles.key_block = std::min({largest_key_block, largest_power_of_two_at_most(fitting),
                              largest_power_of_two_at_most(std::max(1, 1024 / tiles.rows(desc)))});
  return tiles;
}

void schedule_gpu(attention_algorithm& a) {
  const attention_desc& desc = a.desc;
  const int rows = a.tiles.rows(desc);
  const int group = desc.group_size();
  const int v_dim = desc.effective_v_head_dim();
  const int features = features_per_thread(v_dim);
  if (a.tiles.split_per_block) throw std::logic_error("schedule_gpu: key splits are a CPU schedule");
  if (a.first_block.score.defined())
    throw std::logic_error("schedule_gpu: a state started from the first block is a CPU schedule");
  if (a.tiles.key_block < smallest_key_block || gpu_shared_memory_bytes(desc, a.tiles) > shared_memory_budget)
    throw std::logic_error("schedule_gpu: head dims " + std::to_string(desc.qk_head_dim) + "/" +
                           std::to_string(v_dim) + " leave no key block that fits in shared memory");
  Var m("m"), iq("iq"), row("row"), eo("eo"), ei("ei"), d_outer("d_outer"), d_inner("d_inner");

  // One thread block per (query tile, kv head, batch); threads over (feature slice, row). Rows of
  // one tile are (query, group head) pairs, so the group's heads share every staged K/V block.
  for (Func f : a.outputs())
    f.split(a.h, a.g, m, group, TailStrategy::RoundUp)
        .split(a.i, a.it, iq, a.tiles.queries_per_tile, TailStrategy::GuardWithIf);
  a.output.split(a.e, eo, ei, features, TailStrategy::GuardWithIf)
      .reorder(ei, eo, m, iq, a.it, a.g, a.b)
      .fuse(m, iq, row)
      .gpu_blocks(a.it, a.g, a.b)
      .gpu_threads(eo, row)
      .unroll(ei);
  if (desc.lse_output)
    a.lse.reorder(m, iq, a.it, a.g, a.b).fuse(m, iq, row).gpu_blocks(a.it, a.g, a.b).gpu_threads(row);
  if (!state_in_shared_memory(desc, a.tiles)) {
    // Computed once, by its own kernel, for every output that reads it.
    a.state.compute_root();
    for (Stage stage : {Stage(a.state), a.state.update()}) stage.gpu_blocks(a.it, a.g, a.b);
  } else {
    a.state.compute_at(a.output, a.it).bound_extent(a.it, 1);
  }
  a.state.bound(a.s, 0, 1).bound(a.e, 0, v_dim).bound_extent(a.ii, rows);
  // The state's stages: each thread keeps `features` accumulators of one row; key blocks are a loop
  // of the whole thread block, between which the block's K/V are restaged.
  a.state.split(a.e, eo, ei, features, TailStrategy::GuardWithIf).reorder(ei, eo, a.ii).gpu_threads(eo, a.ii).unroll(ei);
  a.state.update()
      .split(a.e, eo, ei, features, TailStrategy::GuardWithIf)
      .reorder(ei, eo, a.ii, a.key_blocks)
      .gpu_threads(eo, a.ii)
      .unroll(ei);

  if (stages_queries(desc, a.tiles)) {
    a.query_tile.compute_at(a.output, a.it)
        .bound_extent(a.ii, rows)
        .bound_extent(a.it, 1)
        .split(a.d, d_outer, d_inner, staging_threads, TailStrategy::GuardWithIf)
        .reorder(d_inner, a.ii, d_outer)
        .gpu_threads(d_inner, a.ii);
  }

  // Each block's keys and values are staged in shared memory.
  Func block_keys = a.key_block.in(a.blocks.dot);
  Func block_values = a.value_block.in(a.blocks.block_pv);
  const LoopLevel per_block(a.state, a.key_blocks);
  // Shared memory of the blocks is allocated outside their loop. Halide 14 pools shared allocations
  // by barrier stage without regard to loops: one allocated inside the loop may reuse the memory of
  // one from outside (the query tile) after its last read in an iteration, which the next iteration
  // still reads (measured on PoCL: wrong outputs whenever a tile ran the loop).
  const LoopLevel block_storage(a.state, a.it);
  block_keys.compute_at(per_block)
      .store_at(block_storage)
      .bound_extent(a.j, a.tiles.key_block)
      .split(a.d, d_outer, d_inner, staging_threads, TailStrategy::GuardWithIf)
      .reorder(d_inner, a.j, d_outer)
      .gpu_threads(d_inner, a.j);
  block_values.compute_at(per_block)
      .store_at(block_storage)
      .bound_extent(a.j, a.tiles.key_block)
      .reorder_storage(a.e, a.j)
      .split(a.e, d_outer, d_inner, staging_threads, TailStrategy::GuardWithIf)
      .reorder(d_inner, a.j, d_outer)
      .gpu_threads(d_inner, a.j);

  // The run-time visibility table: a thread per (key block, query tile), each reducing its block.
  if (visibility_stages& table = a.visibility_in_pipeline; table.table.defined()) {
    Var kbo("kbo"), kbi("kbi"), ito("ito"), iti("iti"), gb("gb");
    table.table.compute_root()
        .split(table.kb, kbo, kbi, 8, TailStrategy::GuardWithIf)
        .split(table.it, ito, iti, 8, TailStrategy::GuardWithIf)
        .reorder(kbi, iti, kbo, ito, table.g, table.b)
        .fuse(table.g, table.b, gb)
        .gpu_blocks(kbo, ito, gb)
        .gpu_threads(kbi, iti);
    table.lanes.compute_at(table.table, kbi);
  }

  block_funcs& f = a.blocks;
  // Scores and weights: one thread per (key, row), in shared memory for the block's later steps.
  for (Func block_local : {f.score, f.weight})
    block_local.compute_at(per_block)
        .store_at(block_storage)
        .bound(a.j, 0, a.tiles.key_block)
        .bound_extent(a.ii, rows)
        .gpu_threads(a.j, a.ii);
  const std::vector<RDom> masking_passes = f.score_masking_passes();
  for (std::size_t update = 0; update < masking_passes.size(); ++update)
    f.score.update(int(update)).gpu_threads(masking_passes[update].x, a.ii);
  f.dot.compute_at(f.score, a.j);
  // Row maxima and sums: one thread per row, its partials in registers.
  for (auto [partial, total] : {std::pair{f.block_max_lanes, f.block_max}, std::pair{f.block_sum_lanes, f.block_sum}}) {
    total.compute_at(per_block).store_at(block_storage).bound_extent(a.ii, rows).gpu_threads(a.ii);
    total.update().gpu_threads(a.ii);
    partial.compute_at(total, a.ii);
  }
  // Each thread's weight x V for its features, in registers.
  f.block_pv.compute_at(a.state, eo).bound_extent(a.e, features).unroll(a.e);
  f.block_pv.update().reorder(a.e, a.ii, a.pv_reduction).unroll(a.e);
}

}  // namespace attngen::codegen
