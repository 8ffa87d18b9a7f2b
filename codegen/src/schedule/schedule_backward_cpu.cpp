#include "attngen/codegen/backward.hpp"

#include <tuple>
#include <vector>

namespace attngen::codegen {

using namespace Halide;

namespace {

// A gradient's recomputed weights, computed per tile of its reduction at `at`: q.k vectorized over
// the keys, the value gradient over the keys as well.
void schedule_weights(recomputed_weights& w, const LoopLevel& at, const Var& j, int lanes) {
  for (Func* f : {&w.dot, &w.value_gradient}) {
    f->compute_at(at).vectorize(j, lanes, TailStrategy::GuardWithIf);
    f->update().vectorize(j, lanes, TailStrategy::GuardWithIf);
  }
  w.score_gradient.compute_at(at).vectorize(j, lanes, TailStrategy::GuardWithIf);
}

// A gradient of rows `rows` (keys for dK and dV, queries for dQ) reduced over `reduction`: tasks of
// `rows_per_task` rows of one head (or kv head) and batch, in parallel; inside one, the reduction in
// tiles of `tile` whose weights are recomputed together; the feature dimension in vector lanes.
// `also_reduced` (the group's heads for dK and dV) is reduced inside a tile's rows.
void schedule_gradient(Func& output, Func& sum, const Var& feature, const Var& row, const Var& head, const Var& batch,
                       const RVar& reduced, const std::vector<RVar>& also_reduced, int rows_per_task, int tile,
                       int lanes, recomputed_weights& w, const Var& weight_row) {
  Var rows_outer("rows_outer"), rows_inner("rows_inner"), task("task");
  output.compute_root()
      .split(row, rows_outer, rows_inner, rows_per_task, TailStrategy::GuardWithIf)
      .reorder(feature, rows_inner, rows_outer, head, batch)
      .fuse(head, batch, task)
      .parallel(task)
      .parallel(rows_outer)
      .vectorize(feature, lanes, TailStrategy::GuardWithIf);
  sum.compute_at(output, rows_outer).vectorize(feature, lanes, TailStrategy::GuardWithIf);
  RVar tiles_outer("tiles_outer"), tiles_inner("tiles_inner");
  std::vector<VarOrRVar> order{feature, row};
  order.insert(order.end(), also_reduced.begin(), also_reduced.end());
  order.insert(order.end(), {tiles_inner, tiles_outer, head, batch});
  sum.update()
      .split(reduced, tiles_outer, tiles_inner, tile, TailStrategy::GuardWithIf)
      .reorder(order)
      .vectorize(feature, lanes, TailStrategy::GuardWithIf);
  schedule_weights(w, LoopLevel(sum, tiles_outer), weight_row, lanes);
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
                      t.query_tile, lanes, *weights, a.j);
  // dQ: a task owns a tile of queries of one head and reduces over the keys.
  schedule_gradient(a.dq, a.dq_sum, a.d, a.i, a.h, a.b, a.keys.x, {}, t.query_tile, t.key_block, lanes, a.for_dq, a.j);
  if (a.d_sinks.defined()) a.d_sinks.compute_root();
}

}  // namespace attngen::codegen
