#include "attngen/codegen/schedule_module.hpp"

#include "attngen/codegen/schedule_cpu.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// Rows of a projection's register tile, and output vectors per row.
constexpr int linear_tile_rows = 4;
constexpr int linear_tile_vectors = 2;

// A matrix product: tiles of rows x output vectors, each tile's sums kept in registers over the
// whole input dimension. Every split guards its tail, so no tile reads past a row or a weight.
void schedule_linear(linear_funcs& f, const module_algorithm& m, int lanes) {
  const Var n = m.n, c = m.c, i = m.i, b = m.b;
  Var no("no"), ni("ni"), io("io"), ii("ii"), task("task");
  f.weight_transposed.compute_root().vectorize(n, lanes, TailStrategy::GuardWithIf);
  f.result.compute_root()
      .split(n, no, ni, lanes * linear_tile_vectors, TailStrategy::GuardWithIf)
      .split(i, io, ii, linear_tile_rows, TailStrategy::GuardWithIf)
      .reorder(ni, ii, no, io, b)
      .fuse(io, b, task)
      .parallel(task)
      .vectorize(ni, lanes, TailStrategy::GuardWithIf);
  f.product.compute_at(f.result, no).vectorize(n, lanes, TailStrategy::GuardWithIf);
  f.product.update().reorder(n, i, f.reduction).vectorize(n, lanes, TailStrategy::GuardWithIf);
}

}  // namespace

void schedule_module_cpu(module_algorithm& m, const Target& target) {
  const int lanes = target.natural_vector_size<float>();
  for (linear_funcs* f : {&m.q_projection, &m.k_projection, &m.v_projection, &m.out_projection})
    schedule_linear(*f, m, lanes);
  for (Func f : {m.keys, m.values})
    f.compute_root().parallel(f.args()[3]).vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf);

  schedule_cpu(m.attention);
  m.attention.output.compute_root();
  if (m.attention.desc.lse_output) m.attention.lse.compute_root();

  m.output.compute_root().parallel(m.output.args()[2]).vectorize(m.n, lanes, TailStrategy::GuardWithIf);
  // Inference calls run a copy of the attention with dropout's test folded away.
  if (m.desc.has_dropout()) m.attention.output.specialize(m.training);

  if (m.desc.weights == weights_output::none) return;
  // One query row at a time: its scores for every head, then its weights.
  m.weights.parallel(m.weights.args().back()).vectorize(m.column, lanes, TailStrategy::GuardWithIf);
  m.score_dot.compute_at(m.weights, m.i).vectorize(m.j, lanes, TailStrategy::GuardWithIf);
  m.score_dot.update().reorder(m.j, m.score_reduction).vectorize(m.j, lanes, TailStrategy::GuardWithIf);
  if (m.desc.weights == weights_output::averaged) {
    m.summed_weights.compute_at(m.weights, m.i).vectorize(m.column, lanes, TailStrategy::GuardWithIf);
    m.summed_weights.update().reorder(m.column, m.head_reduction).vectorize(m.column, lanes, TailStrategy::GuardWithIf);
  }
  if (m.desc.has_dropout()) m.weights.specialize(m.training);
}

}  // namespace attngen::codegen
