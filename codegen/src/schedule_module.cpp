#include "attngen/codegen/schedule_module.hpp"

#include "attngen/codegen/schedule_cpu.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// A matrix product in register tiles of rows x 2 output vectors, each tile's sums kept in registers
// over the whole input dimension. Whole tiles are computed past the ends (the algorithm clamps its
// reads), so every tile has constant extents and unrolls. 8 rows (16 accumulators) fit AVX-512's 32
// registers; 4 rows fit AVX2's 16.
void schedule_linear(linear_funcs& f, const module_algorithm& m, int lanes) {
  const Var n = m.n, i = m.i, b = m.b;
  const int tile_rows = lanes >= 16 ? 8 : 4;
  const int tile_outputs = 2 * lanes;
  Var no("no"), ni("ni"), io("io"), ii("ii"), task("task");
  // The transpose gathers each vector from `lanes` rows of W; blocks of 16 inputs reuse those cache
  // lines for 16 vectors before moving on.
  const Var c = f.weight_transposed.args()[1];
  Var co("co"), ci("ci"), wo("wo"), wi("wi");
  f.weight_transposed.compute_root()
      .split(c, co, ci, 16, TailStrategy::GuardWithIf)
      .split(n, wo, wi, lanes, TailStrategy::RoundUp)
      .reorder(wi, ci, wo, co)
      .vectorize(wi)
      .parallel(co);
  f.result.compute_root()
      .split(n, no, ni, tile_outputs, TailStrategy::RoundUp)
      .split(i, io, ii, tile_rows, TailStrategy::RoundUp)
      .reorder(ni, ii, no, io, b)
      .fuse(io, b, task)
      .parallel(task)
      .vectorize(ni, lanes);
  f.product.compute_at(f.result, no).vectorize(n, lanes).unroll(n).unroll(i);
  f.product.update()
      .reorder(n, i, f.reduction.x, f.reduction.y)
      .vectorize(n, lanes)
      .unroll(n)
      .unroll(i);
}

}  // namespace

void schedule_module_cpu(module_algorithm& m, const Target& target) {
  const int lanes = target.natural_vector_size<float>();
  std::vector<linear_funcs*> projections = {&m.out_projection};
  if (m.desc.self_attn) projections.push_back(&m.qkv_projection);
  else projections.insert(projections.end(), {&m.q_projection, &m.k_projection, &m.v_projection});
  for (linear_funcs* f : projections) schedule_linear(*f, m, lanes);
  for (Func f : {m.keys, m.values})
    f.compute_root().parallel(f.args()[3]).vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf);

  schedule_cpu(m.attention);
  m.attention.output.compute_root();

  m.output.compute_root().parallel(m.output.args()[2]).vectorize(m.n, lanes, TailStrategy::GuardWithIf);
  // Inference calls run a copy of the attention with dropout's test folded away.
  if (m.desc.has_dropout()) m.attention.output.specialize(m.training);

  if (m.desc.weights == weights_output::none) return;
  // One query row at a time: its scores for every head (keys in vector lanes), then its weights.
  m.keys_by_feature.compute_root()
      .parallel(m.keys_by_feature.args()[3])
      .vectorize(m.keys_by_feature.args()[0], lanes, TailStrategy::GuardWithIf);
  m.weights.parallel(m.weights.args().back()).vectorize(m.column, lanes, TailStrategy::GuardWithIf);
  m.score_dot.compute_at(m.weights, m.i).vectorize(m.j, lanes, TailStrategy::GuardWithIf);
  m.scores.compute_at(m.weights, m.i).vectorize(m.j, lanes, TailStrategy::GuardWithIf);
  for (Func f : {m.row_max_lanes, m.row_sum_lanes}) {
    f.compute_at(m.weights, m.i).vectorize(m.lane);
    f.update().vectorize(m.lane);
  }
  m.row_max.compute_at(m.weights, m.i);
  m.row_sum.compute_at(m.weights, m.i);
  m.score_dot.update().reorder(m.j, m.score_reduction).vectorize(m.j, lanes, TailStrategy::GuardWithIf);
  if (m.desc.weights == weights_output::averaged) {
    m.summed_weights.compute_at(m.weights, m.i).vectorize(m.column, lanes, TailStrategy::GuardWithIf);
    m.summed_weights.update().reorder(m.column, m.head_reduction).vectorize(m.column, lanes, TailStrategy::GuardWithIf);
  }
  if (m.desc.has_dropout()) m.weights.specialize(m.training);
}

}  // namespace attngen::codegen
