#include "attngen/codegen/backward.hpp"

#include <tuple>
#include <utility>
#include <vector>

namespace attngen::codegen {

using namespace Halide;

namespace {

// A gradient's recomputed weights, computed per tile of its reduction at `at`, keys in vector lanes:
// each product's reduction runs outside the keys, so a vector of keys' elements is one dense load
// of the transposed keys or values, staged at `keys_at`.
void schedule_weights(recomputed_weights& w, const LoopLevel& at, const LoopLevel& keys_at, const Var& j,
                      const Var& query, int lanes) {
  for (Func* f : {&w.keys_transposed, &w.values_transposed})
    f->compute_at(keys_at).vectorize(j, lanes, TailStrategy::GuardWithIf);
  // Register tiles of two vectors of keys x 4 queries accumulate over the whole head dimension.
  for (auto [product, reduction] : {std::pair{&w.dot, w.dot_reduction}, std::pair{&w.value_gradient, w.value_reduction}}) {
    product->compute_at(at).vectorize(j, lanes, TailStrategy::GuardWithIf);
    Var keys_outer("keys_outer"), keys_inner("keys_inner"), queries_outer("queries_outer"),
        queries_inner("queries_inner");
    product->update()
        .split(j, keys_outer, keys_inner, 2 * lanes, TailStrategy::GuardWithIf)
        .split(query, queries_outer, queries_inner, 4, TailStrategy::GuardWithIf)
        .reorder(keys_inner, queries_inner, reduction.x, keys_outer, queries_outer)
        .vectorize(keys_inner, lanes)
        .unroll(keys_inner)
        .unroll(queries_inner);
  }
  w.score_gradient.compute_at(at).vectorize(j, lanes, TailStrategy::GuardWithIf);
}

// A gradient of rows `rows` (keys for dK and dV, queries for dQ) reduced over `reduction`: tasks of
// `rows_per_task` rows of one head (or kv head) and batch, in parallel; inside one, the reduction in
// tiles of `tile` whose weights are recomputed together; the feature dimension in vector lanes.
// `also_reduced` (the group's heads for dK and dV) is reduced inside a tile's rows.
void schedule_gradient(Func& output, Func& sum, const Var& feature, const Var& row, const Var& head, const Var& batch,
                       const RVar& reduced, const std::vector<RVar>& also_reduced, int rows_per_task, int tile,
                       int lanes, recomputed_weights& w, const Var& weight_row, const Var& weight_query,
                       bool keys_per_task) {
  Var rows_outer("rows_outer"), rows_inner("rows_inner"), task("task");
  output.compute_root()
      .split(row, rows_outer, rows_inner, rows_per_task, TailStrategy::GuardWithIf)
      .reorder(feature, rows_inner, rows_outer, head, batch)
      .fuse(head, batch, task)
      .parallel(task)
      .parallel(rows_outer)
      .vectorize(feature, lanes, TailStrategy::GuardWithIf);
  sum.compute_at(output, rows_outer).vectorize(feature, lanes, TailStrategy::GuardWithIf);
  // A register tile of `tile_rows` rows x two vectors of features accumulates over a reduction tile's
  // terms before it is stored.
  RVar tiles_outer("tiles_outer"), tiles_inner("tiles_inner");
  Var features_outer("features_outer"), features_inner("features_inner"), rows_in_tile("rows_in_tile"),
      row_tiles("row_tiles");
  constexpr int tile_rows = 4;
  std::vector<VarOrRVar> order{features_inner, rows_in_tile};
  order.insert(order.end(), also_reduced.begin(), also_reduced.end());
  order.insert(order.end(), {tiles_inner, row_tiles, features_outer, tiles_outer, head, batch});
  sum.update()
      .split(reduced, tiles_outer, tiles_inner, tile, TailStrategy::GuardWithIf)
      .split(feature, features_outer, features_inner, 2 * lanes, TailStrategy::GuardWithIf)
      .split(row, row_tiles, rows_in_tile, tile_rows, TailStrategy::GuardWithIf)
      .reorder(order)
      .vectorize(features_inner, lanes)
      .unroll(features_inner)
      .unroll(rows_in_tile);
  // Keys and values are staged once per task where the task's rows are keys (dK, dV), per tile of
  // keys otherwise (dQ).
  const LoopLevel tile_level(sum, tiles_outer);
  schedule_weights(w, tile_level, keys_per_task ? LoopLevel(output, rows_outer) : tile_level, weight_row, weight_query, lanes);
}

}  // namespace

void schedule_backward_cpu(backward_algorithm& a, const Target& target) {
  const int lanes = target.natural_vector_size<float>();
  const backward_blocking& t = a.tiles;
  a.delta.compute_root().parallel(a.b).vectorize(a.i, lanes, TailStrategy::GuardWithIf);
  a.delta.update().parallel(a.b).vectorize(a.i, lanes, TailStrategy::GuardWithIf);
  // dV and dK: a task owns a block of keys of one kv head and reduces over (query, group head).
  for (auto [output, sum, feature, weights] : {std::tuple{&a.dv, &a.dv_sum, a.e, &a.for_dv},
                                                std::tuple{&a.dk, &a.dk_sum, a.d, &a.for_dk}})
    schedule_gradient(*output, *sum, feature, a.j, a.g, a.b, a.group_rows.x, {a.group_rows.y}, t.key_block,
                      t.query_tile, lanes, *weights, a.j, a.i, true);
  // dQ: a task owns a tile of queries of one head and reduces over the keys.
  schedule_gradient(a.dq, a.dq_sum, a.d, a.i, a.h, a.b, a.keys.x, {}, t.query_tile, t.key_block, lanes, a.for_dq, a.j, a.i, false);
  if (a.d_sinks.defined()) a.d_sinks.compute_root();
  // Captured gradients: chunks in parallel; each read's update recomputes a tile's weights, the
  // keys staged per head.
  std::vector<capture_gradient*> gradients{&a.d_scalars};
  for (capture_gradient& c : a.d_captures) gradients.push_back(&c);
  for (capture_gradient* c : gradients) {
    if (!c->total.defined()) continue;
    c->total.compute_root();
    c->partial.compute_root();
    for (std::size_t read = 0; read < c->scores.size(); ++read) {
      c->partial.update(int(read)).parallel(c->partial.args().back());
      const RDom& scores = c->scores[read];
      // (Each read's reduction has names of its own, which locate its stage.)
      schedule_weights(c->weights[read], LoopLevel(c->partial, scores[2]), LoopLevel(c->partial, scores[3]),
                       a.j, a.i, lanes);
    }
  }
}

}  // namespace attngen::codegen
