#include "attngen/codegen/backward.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace attngen::codegen {

using namespace Halide;

namespace {

// Vectors of keys per register tile of the weights' products: 4 rows x 4 vectors of accumulators fill
// half of AVX-512's 32 registers; with 16 registers (AVX2, SSE), 4 x 2.
int key_vectors_per_tile(int lanes) { return lanes >= 16 ? 4 : 2; }

// A gradient's recomputed weights, computed at `at` for one (key block, query tile, head), keys in
// vector lanes; each product in register tiles of key vectors x 4 queries over the whole head dim.
void schedule_weights(recomputed_weights& w, const LoopLevel& at, const Var& j, const Var& query, int lanes) {
  const int tile_keys = key_vectors_per_tile(lanes) * lanes;
  for (auto [product, reduction] : {std::pair{&w.dot, w.dot_reduction}, std::pair{&w.value_gradient, w.value_reduction}}) {
    product->compute_at(at).vectorize(j, lanes, TailStrategy::GuardWithIf);
    Var keys_outer("keys_outer"), keys_inner("keys_inner"), queries_outer("queries_outer"),
        queries_inner("queries_inner");
    product->update()
        .split(j, keys_outer, keys_inner, tile_keys, TailStrategy::GuardWithIf)
        .split(query, queries_outer, queries_inner, 4, TailStrategy::GuardWithIf)
        .reorder(keys_inner, queries_inner, reduction.x, keys_outer, queries_outer)
        .vectorize(keys_inner, lanes)
        .unroll(keys_inner)
        .unroll(queries_inner);
  }
  for (Func* f : {&w.weight, &w.dropped_weight, &w.score_gradient})
    f->compute_at(at).vectorize(j, lanes, TailStrategy::GuardWithIf);
}

// A register tile row's features and their vector width: `most` vectors of every lane where they
// divide the count; else vectors of the widest power of two that divides it, as many as divide it
// within `most` vectors' worth, so every tile is whole (an update's vectors cannot shift inwards).
struct feature_tile {
  int features, width;
};
feature_tile features_per_tile(int features, int lanes, int most) {
  for (int vectors = most; vectors >= 1; vectors /= 2)
    if (features % (vectors * lanes) == 0) return {vectors * lanes, lanes};
  int width = lanes;
  while (features % width != 0) width /= 2;
  int vectors = std::max(1, most * lanes / width);
  while ((features / width) % vectors != 0) --vectors;
  return {vectors * width, width};
}

// A register tile's partial sum: one vector accumulator per 4 rows x `width` features, over its terms.
struct register_tile {
  Func partial;
  Var feature, row;
  RVar term;
  bool fixed_features;  ///< whether every tile has the tile's features (else the last is clamped)
};

constexpr int rows_per_tile = 4;

// `total`'s update split into register tiles of 4 rows x `tile_features` (features innermost), ordered
// `outer` beyond them; each of `tiles` computed per register tile.
void schedule_register_tiles(Func total, const Var& feature, const Var& row, const std::vector<VarOrRVar>& outer,
                             const std::vector<register_tile>& tiles, int tile_features, int width) {
  Var features_outer("features_outer"), features_inner("features_inner"), rows_outer("rows_outer"),
      rows_inner("rows_inner");
  std::vector<VarOrRVar> order{features_inner, rows_inner, features_outer, rows_outer};
  order.insert(order.end(), outer.begin(), outer.end());
  total.update()
      .split(feature, features_outer, features_inner, tile_features)
      .split(row, rows_outer, rows_inner, rows_per_tile)
      .reorder(order)
      .vectorize(features_inner, width)
      .unroll(features_inner)
      .unroll(rows_inner);
  for (register_tile t : tiles) {
    t.partial.compute_at(total, features_outer).bound_extent(t.row, rows_per_tile).vectorize(t.feature, width);
    if (t.fixed_features) t.partial.bound_extent(t.feature, tile_features).unroll(t.feature);
    t.partial.unroll(t.row);
    t.partial.update().reorder(t.feature, t.row, t.term).vectorize(t.feature, width).unroll(t.row);
    if (t.fixed_features) t.partial.update().unroll(t.feature);
  }
}

// One pass: a task per (kv head, batch) walks its key blocks, in each every query tile and group head,
// and recomputes the weights of a (key block, query tile, head) once for dK's, dV's and dQ's register
// tiles; each sum is added by its task in a fixed order.
void schedule_one_pass(backward_algorithm& a, int lanes) {
  const int qk_dim = a.forward.desc.qk_head_dim;
  const int key_features = std::max(qk_dim, a.forward.desc.effective_v_head_dim());
  const auto [tile_features, width] = features_per_tile(key_features, lanes, key_vectors_per_tile(lanes));
  Var task("task");
  a.pass_sums.compute_root().fuse(a.g, a.b, task).parallel(task).vectorize(a.x, lanes, TailStrategy::GuardWithIf);
  a.pass_sums.update().fuse(a.g, a.b, task).parallel(task);
  // dQ's features are D: fixed at the tile's width only where that is every feature.
  schedule_register_tiles(a.pass_sums, a.x, a.jj, {a.pass.x, a.pass.y, a.pass.z, a.pass.w},
                          {{a.dk_tile_sums, a.x, a.jj, a.tile_rows.x, true},
                           {a.dv_tile_sums, a.x, a.jj, a.tile_rows.x, true},
                           {a.dq_block_sums, a.d, a.ii, a.block_keys.x, qk_dim == key_features}},
                          tile_features, width);
  schedule_weights(a.for_keys, LoopLevel(a.pass_sums, a.pass.y), a.j, a.i, lanes);
  for (auto [gradient, feature, heads] : {std::tuple{&a.dk, a.d, a.g}, std::tuple{&a.dv, a.e, a.g}, std::tuple{&a.dq, a.d, a.h}})
    gradient->compute_root().parallel(a.b).parallel(heads).vectorize(feature, lanes, TailStrategy::GuardWithIf);
  // A key block's K and V copied densely where its weights are recomputed, once per block and task
  // (train_gqa_causal backward 100-101 -> 91-92 ms, when dK and dV had a pass of their own).
  a.keys_by_key.in(a.for_keys.dot).compute_at(a.pass_sums, a.pass.w).vectorize(a.j, lanes, TailStrategy::GuardWithIf);
  a.values_by_key.in(a.for_keys.value_gradient)
      .compute_at(a.pass_sums, a.pass.w)
      .vectorize(a.j, lanes, TailStrategy::GuardWithIf);
}

// Two passes, each with more tasks than one pass's (kv heads x batch): dK and dV in tasks of a key block
// of one kv head, dQ in tasks of a query tile of one head, each recomputing the weights of a (key
// block, query tile, head) at a time. The same sums in the same order as one pass: the same bits.
void schedule_two_passes(backward_algorithm& a, int lanes) {
  const int qk_dim = a.forward.desc.qk_head_dim;
  const int key_features = std::max(qk_dim, a.forward.desc.effective_v_head_dim());
  // dK's and dV's loops fused (compute_with), so that a task's sums, computed inside them, serve both:
  // the sums of a key block stay in cache, never a whole (Lk x D) buffer.
  for (Func* f : {&a.dk, &a.dv}) {
    const Var feature = f == &a.dk ? a.d : a.e;
    f->compute_root()
        .split(a.j, a.jb, a.jj, a.tiles.key_block, TailStrategy::GuardWithIf)
        .reorder(feature, a.jj, a.jb, a.g, a.b)
        .parallel(a.jb)
        .vectorize(feature, lanes, TailStrategy::GuardWithIf);
  }
  a.dk.compute_with(a.dv, a.jb);
  a.key_sums.compute_at(a.dv, a.jb).vectorize(a.x, lanes, TailStrategy::GuardWithIf);
  const auto [key_tile_features, key_width] = features_per_tile(key_features, lanes, key_vectors_per_tile(lanes));
  schedule_register_tiles(a.key_sums, a.x, a.jj, {a.key_rows.y, a.key_rows.x},
                          {{a.dk_tile_sums, a.x, a.jj, a.tile_rows.x, true},
                           {a.dv_tile_sums, a.x, a.jj, a.tile_rows.x, true}},
                          key_tile_features, key_width);
  schedule_weights(a.for_keys, LoopLevel(a.key_sums, a.key_rows.y), a.j, a.i, lanes);

  Var query_task("query_task");
  a.dq.compute_root()
      .split(a.i, a.it, a.ii, a.tiles.query_tile, TailStrategy::GuardWithIf)
      .reorder(a.d, a.ii, a.it, a.h, a.b)
      .fuse(a.it, a.h, query_task)
      .fuse(query_task, a.b, query_task)
      .parallel(query_task)
      .vectorize(a.d, lanes, TailStrategy::GuardWithIf);
  a.dq_sum.compute_at(a.dq, query_task).vectorize(a.d, lanes, TailStrategy::GuardWithIf);
  const auto [query_tile_features, query_width] = features_per_tile(qk_dim, lanes, key_vectors_per_tile(lanes));
  schedule_register_tiles(a.dq_sum, a.d, a.ii, {a.query_columns.x},
                          {{a.dq_block_sums, a.d, a.ii, a.block_keys.x, true}}, query_tile_features, query_width);
  schedule_weights(a.for_dq, LoopLevel(a.dq_sum, a.query_columns.x), a.j, a.i, lanes);

  // K and V by key with rows padded past a whole number of key blocks, so that a feature's keys never
  // lie a multiple of 4 KiB apart (one L1 set; Lk 1024 did). The dK/dV task copies its block densely
  // where its weights are recomputed, once per task (train_gqa_causal backward 100-101 -> 91-92 ms,
  // unpadded); the dQ tasks, which would copy every block once per query tile, read the padded rows
  // in place: 3 interleaved runs against copying there too, train_gqa_causal 84.1-85.0 -> 78.2-81.0
  // ms, train_mha 43.8-46.4 -> 42.7-45.2 (without the dK/dV copy: 80.6-82.3, 43.9-44.6).
  const Expr key_blocks = a.query_columns.x.extent();  // a dQ task's columns are the key blocks
  for (Func* by_key : {&a.keys_by_key, &a.values_by_key})
    by_key->bound_storage(a.j, (key_blocks + 1) * a.tiles.key_block + lanes);
  a.keys_by_key.in(a.for_keys.dot).compute_at(a.dv, a.jb).vectorize(a.j, lanes, TailStrategy::GuardWithIf);
  a.values_by_key.in(a.for_keys.value_gradient)
      .compute_at(a.dv, a.jb)
      .vectorize(a.j, lanes, TailStrategy::GuardWithIf);
}

}  // namespace

backward_blocking cpu_backward_blocking(bool one_pass) {
  // One pass needs square tiles; two passes take the same, so that both write the same bits.
  return {.key_block = 64, .query_tile = 64, .one_pass = one_pass};
}

void schedule_backward_cpu(backward_algorithm& a, const Target& target) {
  const int lanes = target.natural_vector_size<float>();
  // The keys' and values' float copies, once per call: O(L x D) each.
  a.keys_by_row.compute_root().parallel(a.b).parallel(a.g).vectorize(a.d, lanes, TailStrategy::GuardWithIf);
  // Transposed by tiles of lanes x lanes: a tile's rows loaded as vectors, then each vector of keys
  // read across them, which Halide turns into shuffles. Both copies, B4 H16 D64 L512 (train_mha):
  // 11% of the backward's time with every element gathered, 3% so; backward, 2 interleaved runs:
  // train_mha 48.5-48.9 -> 45.8-46.8 ms, train_gqa_causal 87.2-90.2 -> 85.5-86.9 ms.
  for (auto [by_key, stored] : {std::pair{&a.keys_by_key, a.forward.sources.k}, std::pair{&a.values_by_key, a.forward.sources.v}}) {
    Var task("task"), keys_outer("keys_outer"), keys_inner("keys_inner"), features_outer("features_outer"),
        features_inner("features_inner");
    const Var feature = by_key->args()[1];
    by_key->compute_root()
        .tile(a.j, feature, keys_outer, features_outer, keys_inner, features_inner, lanes, lanes, TailStrategy::GuardWithIf)
        .fuse(a.g, a.b, task)
        .parallel(task)
        .vectorize(keys_inner)
        .unroll(features_inner);
    Func tile_rows = stored.in(*by_key);
    tile_rows.compute_at(*by_key, keys_outer).vectorize(tile_rows.args()[0], lanes, TailStrategy::GuardWithIf);
  }
  // Queries and the output's gradient as float, each head's rows together, once per call: stored ones
  // lie H x D apart (often 16 KiB, one L1 set), and the tile sums read a tile's rows as vectors.
  // Backward time, 2 interleaved runs: train_gqa_causal 102-105 -> 94-98 ms, train_mha 51-52 -> 47-51.
  for (Func* rows : {&a.queries, &a.output_gradient}) {
    const Var feature = rows->args()[0];
    rows->compute_root()
        .reorder_storage(feature, a.i, a.h, a.b)
        .reorder(feature, a.i, a.h, a.b)
        .parallel(a.h)
        .vectorize(feature, lanes, TailStrategy::GuardWithIf);
  }
  // delta: each row's dot product as vectors along the features, reduced across their lanes.
  RVar delta_outer("delta_outer"), delta_inner("delta_inner");
  const int v_dim = a.forward.desc.effective_v_head_dim(), delta_lanes = v_dim % lanes == 0 ? lanes : 1;
  a.delta.compute_root().parallel(a.b).parallel(a.h);
  a.delta.update()
      .split(a.delta_features.x, delta_outer, delta_inner, delta_lanes)
      .atomic()
      .vectorize(delta_inner)
      .parallel(a.b)
      .parallel(a.h);

  if (a.tiles.one_pass)
    schedule_one_pass(a, lanes);
  else
    schedule_two_passes(a, lanes);

  if (a.d_sinks.defined()) a.d_sinks.compute_root();
  // Captured gradients: chunks in parallel; each read's update recomputes a tile's weights.
  std::vector<capture_gradient*> gradients{&a.d_scalars};
  for (capture_gradient& c : a.d_captures) gradients.push_back(&c);
  for (capture_gradient* c : gradients) {
    if (!c->total.defined()) continue;
    c->total.compute_root();
    c->partial.compute_root();
    for (std::size_t read = 0; read < c->scores.size(); ++read) {
      c->partial.update(int(read)).parallel(c->partial.args().back());
      // (Each read's reduction has names of its own, which locate its stage.)
      schedule_weights(c->weights[read], LoopLevel(c->partial, c->scores[read][2]), a.j, a.i, lanes);
    }
  }
}

}  // namespace attngen::codegen
