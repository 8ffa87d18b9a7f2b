#include "attngen/codegen/schedule_module.hpp"

#include <stdexcept>

#include "attngen/codegen/schedule_cpu.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// The projection parts' linear layer: the output in tiles of rows x 2 vectors of outputs, each
// tile's sums kept in registers over the whole input dimension, then stored. The sums cover whole
// tiles past the ends (the algorithm clamps their reads), so they have constant extents and unroll;
// stores past the ends are skipped. 8 rows (16 accumulators) fit AVX-512's 32 registers; 4 rows fit
// AVX2's 16.
void schedule_linear_part(module_algorithm& m, int lanes) {
  linear_funcs& f = m.linear;
  const Var n = m.n, i = m.i, b = m.b;
  const int tile_rows = lanes >= 16 ? 8 : 4;
  const int tile_outputs = linear_tile_outputs(lanes);
  Var no("no"), ni("ni"), io("io"), ii("ii"), task("task");
  // W transposed in panels of a tile's outputs, so that a tile streams its panel as one dense run
  // (with W transposed whole, each input's 32 outputs lay a row of W^T apart, 2 or 4 KiB: against
  // that, 4 interleaved runs: module_cross_gqa 11.1-11.8 against 11.6-12.1 ms, module_self 3.18-3.38
  // against 3.32-3.53). Transposed by tiles of lanes x inputs_per_tile: a tile's rows of W loaded as
  // vectors, then each vector of outputs read across them (shuffles, where each was gathered element
  // by element: module_cross_gqa 12.2-12.5 -> 11.7-11.9 ms).
  const Var within = f.weight_panels.args()[0], c = f.weight_panels.args()[1], panel = f.weight_panels.args()[2];
  const int inputs_per_tile = 16;
  Var co("co"), ci("ci"), wo("wo"), wi("wi");
  f.weight_panels.compute_root()
      .bound(within, 0, tile_outputs)
      .split(c, co, ci, inputs_per_tile, TailStrategy::GuardWithIf)
      .split(within, wo, wi, lanes)
      .reorder(wi, ci, wo, panel, co)
      .vectorize(wi)
      .unroll(ci)
      .parallel(co);
  Func weight_rows = f.weight.in(f.weight_panels);
  weight_rows.compute_at(f.weight_panels, wo)
      .vectorize(weight_rows.args()[0], inputs_per_tile, TailStrategy::GuardWithIf);
  // A task is 8 row tiles, which reuse each panel while it is in L2 (a task per tile streamed all of W
  // per tile). With W^T's rows padded off one L1 set, 2 interleaved runs: module_self 4.02-4.19 ->
  // 3.18-3.20 ms (projections 0.64-0.66 -> 0.87 of peak), module_cross_gqa (E1024) 14.9-15.1 -> 12.3-12.4.
  Var iob("iob");
  m.output.split(n, no, ni, tile_outputs, TailStrategy::GuardWithIf)
      .split(i, io, ii, tile_rows, TailStrategy::GuardWithIf)
      .split(io, iob, io, 8, TailStrategy::GuardWithIf)
      .reorder(ni, ii, io, no, iob, b)
      .fuse(iob, b, task)
      .parallel(task)
      .vectorize(ni, lanes);
  // Aligned, a tile's outputs are one panel's, and its reads of the panel are dense vectors.
  f.product.compute_at(m.output, io)
      .align_bounds(n, tile_outputs)
      .bound_extent(n, tile_outputs)
      .bound_extent(i, tile_rows)
      .vectorize(n, lanes)
      .unroll(n)
      .unroll(i);
  f.product.update()
      .reorder(n, i, f.reduction.x, f.reduction.y)
      .vectorize(n, lanes)
      .unroll(n)
      .unroll(i);
}

// Tiles of query rows per task, so one sequence uses every thread. A tile's scores are computed for
// every head in register tiles of its rows x one vector of keys, each key vector loaded once for all
// the rows; then each row's softmax and weights. Stages cover whole vectors of keys (keys past the
// end are clamped reads that score as masked), so they need no tail code.
void schedule_weights(module_algorithm& m, int lanes) {
  const int tile_rows = 8;
  m.keys_by_feature.compute_root()
      .parallel(m.keys_by_feature.args()[3])
      .vectorize(m.keys_by_feature.args()[0], lanes, TailStrategy::RoundUp);
  Var io("io"), ii("ii"), task("task"), jo("jo"), ji("ji");
  m.weights.split(m.i, io, ii, tile_rows, TailStrategy::GuardWithIf);
  if (m.desc.weights == weights_output::per_head) m.weights.reorder(m.column, ii, m.h, io, m.b);
  m.weights.fuse(io, m.b, task).parallel(task).vectorize(m.column, lanes, TailStrategy::GuardWithIf);
  m.scores.compute_at(m.weights, task)
      .bound_extent(m.i, tile_rows)
      .split(m.j, jo, ji, lanes, TailStrategy::RoundUp)
      .reorder(ji, m.i, jo, m.h, m.b)
      .vectorize(ji)
      .unroll(m.i);
  m.score_dot.compute_at(m.scores, jo).bound_extent(m.j, lanes).vectorize(m.j).unroll(m.i);
  m.score_dot.update().reorder(m.j, m.i, m.score_reduction).vectorize(m.j).unroll(m.i);
  for (Func f : {m.row_max_lanes, m.row_sum_lanes}) {
    f.compute_at(m.weights, ii).vectorize(m.lane);
    f.update().vectorize(m.lane);
  }
  m.row_max.compute_at(m.weights, ii);
  m.row_sum.compute_at(m.weights, ii);
  if (m.desc.weights == weights_output::averaged) {
    m.summed_weights.compute_at(m.weights, ii).vectorize(m.column, lanes, TailStrategy::RoundUp);
    m.summed_weights.update().reorder(m.column, m.head_reduction).vectorize(m.column, lanes, TailStrategy::RoundUp);
  }
  if (m.desc.has_dropout()) m.weights.specialize(m.training);
}

}  // namespace

void schedule_module_cpu(module_algorithm& m, const Target& target) {
  const int lanes = target.natural_vector_size<float>();
  switch (m.part) {
    case module_part::projection:
    case module_part::out_projection:
      schedule_linear_part(m, lanes);
      return;
    case module_part::attention:
      schedule_cpu(m.attention);
      // Inference calls run a copy of the attention with dropout's test folded away.
      if (m.desc.has_dropout()) m.attention.output.specialize(m.training);
      return;
    case module_part::weights:
      schedule_weights(m, lanes);
      return;
    case module_part::whole:
      break;
  }
  throw std::invalid_argument("schedule_module_cpu: CPU code is scheduled part by part");
}

}  // namespace attngen::codegen
