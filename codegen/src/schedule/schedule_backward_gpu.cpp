#include <algorithm>
#include <utility>
#include <vector>

#include "attngen/codegen/backward.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// Threads of a block at most: a CUDA SM's 64 Ki registers over the sums' threads, which take up to
// 168 registers each (ptxas, sm_80 and sm_90).
constexpr int most_threads = 256;

// Features of a sum each thread accumulates: the widest power of two up to 8 dividing the count, or
// wider where `rows` threads per slice would pass most_threads.
int features_per_thread(int features, int rows) {
  int per_thread = 8;
  while (features % per_thread != 0) per_thread /= 2;
  while ((features / per_thread) * rows > most_threads && features % (2 * per_thread) == 0) per_thread *= 2;
  return per_thread;
}

// A copy or elementwise stage of its own kernel: 32 x 8 threads over (x, y), a block per tile of
// them and per (z, w).
void schedule_grid(Func& f, const Var& x, const Var& y, const Var& z, const Var& w) {
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), zw("zw");
  f.compute_root()
      .split(x, xo, xi, 32, TailStrategy::GuardWithIf)
      .split(y, yo, yi, 8, TailStrategy::GuardWithIf)
      .fuse(z, w, zw)
      .reorder(xi, yi, xo, yo, zw)
      .gpu_blocks(xo, yo, zw)
      .gpu_threads(xi, yi);
}

// The weights of one (key block, query tile, head), in shared memory at `at`, a thread per (key,
// query). They are stored at `storage`, outside the loop that `at` is in (see schedule_gpu), folded
// to one tile along the dimensions `folded` that the loop walks: (dimension, extent) pairs.
void schedule_weights_gpu(recomputed_weights& w, const LoopLevel& at, const LoopLevel& storage, const Var& j,
                          const Var& i, const std::vector<std::pair<Var, int>>& folded) {
  for (Func* f : {&w.dot, &w.value_gradient, &w.weight, &w.dropped_weight, &w.score_gradient}) {
    f->compute_at(at).store_at(storage).gpu_threads(j, i);
    for (const auto& [dimension, extent] : folded) f->fold_storage(dimension, extent);
  }
  for (Func* product : {&w.dot, &w.value_gradient}) product->update().gpu_threads(j, i);
}

// A per-thread sum of `features` features of one row, in registers, at thread loop `at`.
void schedule_thread_sum(Func& sum, const LoopLevel& at, const Var& feature, const Var& row, int features) {
  sum.compute_at(at).bound_extent(feature, features).bound_extent(row, 1).unroll(feature);
  sum.update().unroll(feature);
}

}  // namespace

backward_blocking gpu_backward_blocking(const attention_desc&) {
  // A thread per (key, query) of the weights: 16 x 16 stays within most_threads. Shared memory
  // holds the weights (4 x 16 x 16 floats) and dQ's sums of a tile (D x 16 floats): 20 KiB at D 256.
  return {.key_block = 16, .query_tile = 16};
}

void schedule_backward_gpu(backward_algorithm& a) {
  const attention_desc& desc = a.forward.desc;
  const backward_blocking& tiles = a.tiles;
  const int key_features = std::max(desc.qk_head_dim, desc.effective_v_head_dim());
  schedule_grid(a.keys_by_key, a.j, a.d, a.g, a.b);
  schedule_grid(a.values_by_key, a.j, a.e, a.g, a.b);
  schedule_grid(a.keys_by_row, a.d, a.j, a.g, a.b);
  // delta: a thread per row, reducing along its features.
  Var io("io"), ii("ii");
  a.delta.compute_root();
  for (Stage stage : {Stage(a.delta), a.delta.update()})
    stage.split(a.i, io, ii, 64, TailStrategy::GuardWithIf).gpu_blocks(io, a.h, a.b).gpu_threads(ii);

  // dK and dV: a thread block per (key block, kv head, batch); a thread per (key, slice of features)
  // sums its slice over the query tiles and group heads, a tile's weights at a time in shared memory.
  {
    const int per_thread = features_per_thread(key_features, tiles.key_block);
    Var xo("xo"), xi("xi");
    a.key_sums.compute_root();
    a.key_sums.split(a.x, xo, xi, per_thread, TailStrategy::GuardWithIf)
        .reorder(xi, xo, a.jj, a.jb, a.g, a.b)
        .gpu_blocks(a.jb, a.g, a.b)
        .gpu_threads(xo, a.jj)
        .unroll(xi);
    a.key_sums.update()
        .split(a.x, xo, xi, per_thread, TailStrategy::GuardWithIf)
        .reorder(xi, xo, a.jj, a.key_rows.y, a.key_rows.x, a.jb, a.g, a.b)
        .gpu_blocks(a.jb, a.g, a.b)
        .gpu_threads(xo, a.jj)
        .unroll(xi);
    for (Func* sum : {&a.dk_tile_sums, &a.dv_tile_sums})
      schedule_thread_sum(*sum, LoopLevel(a.key_sums, xo), a.x, a.jj, per_thread);
    schedule_weights_gpu(a.for_keys, LoopLevel(a.key_sums, a.key_rows.y), LoopLevel(a.key_sums, a.jb), a.j, a.i,
                         {{a.i, tiles.query_tile}, {a.h, 1}});
    schedule_grid(a.dk, a.d, a.j, a.g, a.b);
    schedule_grid(a.dv, a.e, a.j, a.g, a.b);
  }

  // dQ: a thread block per (query tile, head, batch); a thread per (query, slice of features) sums its
  // slice over the key blocks, a block's weights at a time in shared memory.
  {
    const int per_thread = features_per_thread(desc.qk_head_dim, tiles.query_tile);
    Var d_outer("d_outer"), d_inner("d_inner");
    a.dq.compute_root()
        .split(a.i, a.it, a.ii, tiles.query_tile, TailStrategy::GuardWithIf)
        .split(a.d, d_outer, d_inner, per_thread, TailStrategy::GuardWithIf)
        .reorder(d_inner, d_outer, a.ii, a.it, a.h, a.b)
        .gpu_blocks(a.it, a.h, a.b)
        .gpu_threads(d_outer, a.ii)
        .unroll(d_inner);
    a.dq_sum.compute_at(a.dq, a.it)
        .bound_extent(a.ii, tiles.query_tile)
        .split(a.d, d_outer, d_inner, per_thread, TailStrategy::GuardWithIf)
        .reorder(d_inner, d_outer, a.ii)
        .gpu_threads(d_outer, a.ii)
        .unroll(d_inner);
    a.dq_sum.update()
        .split(a.d, d_outer, d_inner, per_thread, TailStrategy::GuardWithIf)
        .reorder(d_inner, d_outer, a.ii, a.query_columns.x)
        .gpu_threads(d_outer, a.ii)
        .unroll(d_inner);
    schedule_thread_sum(a.dq_block_sums, LoopLevel(a.dq_sum, d_outer), a.d, a.ii, per_thread);
    schedule_weights_gpu(a.for_dq, LoopLevel(a.dq_sum, a.query_columns.x), LoopLevel(a.dq, a.it), a.j, a.i,
                         {{a.j, tiles.key_block}});
  }

  if (a.d_sinks.defined()) {
    a.d_sinks.compute_root().gpu_single_thread();
    a.d_sinks.update().gpu_single_thread();
  }
  // Captured gradients: a thread block of one thread per chunk scatters the chunk's contributions in
  // order (two keys may add to one element: threads would race), each (key, query)'s weight in
  // registers.
  std::vector<capture_gradient*> gradients{&a.d_scalars};
  for (capture_gradient& c : a.d_captures) gradients.push_back(&c);
  for (capture_gradient* c : gradients) {
    if (!c->total.defined()) continue;
    c->total.compute_root().gpu_single_thread();
    c->total.update().gpu_single_thread();
    const Var chunk = c->partial.args().back();
    c->partial.compute_root().reorder(chunk, c->partial.args().front()).gpu_blocks(chunk);
    for (std::size_t read = 0; read < c->scores.size(); ++read) {
      c->partial.update(int(read)).gpu_blocks(chunk);
      recomputed_weights& w = c->weights[read];
      const LoopLevel per_score(c->partial, c->scores[read][0]);
      for (Func* f : {&w.dot, &w.value_gradient, &w.weight, &w.dropped_weight}) f->compute_at(per_score);
    }
  }
}

}  // namespace attngen::codegen
