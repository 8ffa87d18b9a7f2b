#include "attngen/codegen/schedule_module.hpp"

#include <stdexcept>

#include "attngen/codegen/schedule_cpu.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// The projection parts' linear layer: the output in tiles of rows x a panel of output vectors
// (linear_tile_outputs), each tile's sums kept in registers over the whole input dimension, then
// stored. The sums cover whole tiles past the ends (the algorithm clamps their reads), so they have
// constant extents and unroll; stores past the ends are skipped. AVX-512: 6 rows x 4 vectors (24 of
// its 32 registers), against 8 x 2 paired runs on a 2-core Xeon, new / old time: module_self 0.92
// (faster in 5 of 5), module_self_weights 0.95, module_cross_gqa 1.00; a bare loop from L2 read
// 0.86-0.87 of one core's FMA peak at 6 x 4, 0.74-0.79 at 8 x 2. AVX2: 4 rows x 2 vectors of its 16.
void schedule_linear_part(module_algorithm& m, int lanes) {
  linear_funcs& f = m.linear;
  const Var n = m.n, i = m.i, b = m.b;
  const int tile_rows = lanes >= 16 ? 6 : 4;
  const int tile_outputs = linear_tile_outputs(lanes);
  Var no("no"), ni("ni"), io("io"), ii("ii"), chunk("chunk"), task("task");
  // A task is one panel of outputs over a chunk of up to 64 row tiles of every batch: it transposes
  // its panel of W (64 or 128 KiB) into a buffer of its own, which its row tiles then stream from L2.
  // Against W transposed whole before the product (a pass that wrote all of W^T to memory and read it
  // back), interleaved JIT runs of the part: E512 x 512 rows 0.80-0.82 -> 0.74-0.75 ms, E1024 x 256
  // rows 1.80 -> 1.63-1.73 ms, E1024 x 2048 rows 11.9-12.0 -> 11.9-12.1 ms (chunks of 32 tiles the
  // same within noise; of 128, 2048 rows re-read once per panel: 11.9-12.7 ms).
  m.output.split(n, no, ni, tile_outputs, TailStrategy::GuardWithIf)
      .split(i, io, ii, tile_rows, TailStrategy::GuardWithIf)
      .split(io, chunk, io, 64, TailStrategy::GuardWithIf)
      .reorder(ni, ii, io, b, chunk, no)
      .fuse(chunk, no, task)
      .parallel(task)
      .vectorize(ni, lanes);
  // W transposed in panels of a tile's outputs, so that a tile streams its panel as one dense run
  // (with W transposed whole, each input's 32 outputs lay a row of W^T apart, 2 or 4 KiB: against
  // that, 4 interleaved runs: module_cross_gqa 11.1-11.8 against 11.6-12.1 ms, module_self 3.18-3.38
  // against 3.32-3.53). Transposed by tiles of lanes x inputs_per_tile: a tile's rows of W loaded as
  // vectors, then each vector of outputs read across them. Those rows' buffer bound to its constant
  // size: sized by the tile's tail otherwise, it was a heap allocation per tile read by gathers
  // (transposing E512's W 0.116 -> 0.05-0.06 ms, E1024's 0.46-0.50 -> 0.18-0.21 ms).
  const Var within = f.weight_panels.args()[0], c = f.weight_panels.args()[1];
  const int inputs_per_tile = 16;
  Var co("co"), ci("ci"), wo("wo"), wi("wi");
  f.weight_panels.compute_at(m.output, task)
      .bound(within, 0, tile_outputs)
      .split(c, co, ci, inputs_per_tile, TailStrategy::GuardWithIf)
      .split(within, wo, wi, lanes)
      .reorder(wi, ci, wo, co)
      .vectorize(wi)
      .unroll(ci);
  Func weight_rows = f.weight.in(f.weight_panels);
  weight_rows.compute_at(f.weight_panels, wo)
      .bound_storage(weight_rows.args()[0], inputs_per_tile)
      .bound_storage(weight_rows.args()[1], lanes)
      .vectorize(weight_rows.args()[0], inputs_per_tile, TailStrategy::GuardWithIf);
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
  // A register tile of the tile's rows x 2 key vectors: with one vector, each step's K load and 8
  // broadcasts fed 8 FMAs (module_self_weights' weights part 0.70 -> 0.63 ms, 3 interleaved runs).
  const int key_vectors = 2;
  Var jm("jm"), jv("jv");
  m.scores.compute_at(m.weights, task)
      .bound_extent(m.i, tile_rows)
      .split(m.j, jo, ji, key_vectors * lanes, TailStrategy::RoundUp)
      .reorder(ji, m.i, jo, m.h, m.b)
      .vectorize(ji, lanes)
      .unroll(ji)
      .unroll(m.i);
  m.score_dot.compute_at(m.scores, jo).bound_extent(m.j, key_vectors * lanes).vectorize(m.j, lanes).unroll(m.j).unroll(m.i);
  m.score_dot.update()
      .split(m.j, jm, jv, lanes)
      .reorder(jv, jm, m.i, m.score_reduction)
      .vectorize(jv)
      .unroll(jm)
      .unroll(m.i);
  for (Func f : {m.row_max_lanes, m.row_sum_lanes}) {
    f.compute_at(m.weights, ii).vectorize(m.lane);
    f.update().vectorize(m.lane);
  }
  m.row_max.compute_at(m.weights, ii);
  // Each exponential once, where the row's sum and its weights read it: two exps per score cost a
  // sixth of the weights part's time (module_self_weights, 2026-12-02, a 2-core Xeon).
  m.exponentials.compute_at(m.weights, ii).vectorize(m.j, lanes, TailStrategy::RoundUp);
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
    case module_part::backward:
      break;
  }
  throw std::invalid_argument("schedule_module_cpu: CPU code is scheduled part by part");
}

}  // namespace attngen::codegen
