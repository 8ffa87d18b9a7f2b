#include "attngen/codegen/schedule_module.hpp"

#include "attngen/codegen/schedule_gpu.hpp"
#include "gpu_tiles.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// Rows that each thread of a matrix product keeps in registers.
constexpr int product_rows_per_thread = 4;

// A row reduction (i, h, b) whose partials Func is computed per row: one thread per row.
void schedule_row_reduction_gpu(Func total, Func partials, const module_algorithm& m) {
  Var io("io"), ii("ii");
  total.compute_root();
  for (Stage stage : {Stage(total), total.update()})
    stage.split(m.i, io, ii, tile_x, TailStrategy::GuardWithIf).gpu_blocks(io, m.h, m.b).gpu_threads(ii);
  partials.compute_at(total, ii);
}

}  // namespace

Var gpu_tiles(Stage stage, VarOrRVar x, VarOrRVar y, const std::vector<VarOrRVar>& outer) {
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
  stage.split(x, xo, xi, tile_x, TailStrategy::GuardWithIf).split(y, yo, yi, tile_y, TailStrategy::GuardWithIf);
  if (outer.size() == 2) {
    Var fused("outer");
    stage.reorder(xi, yi, xo, yo, outer[0], outer[1]).fuse(outer[0], outer[1], fused).gpu_blocks(xo, yo, fused);
  } else {
    stage.reorder(xi, yi, xo, yo, outer[0]).gpu_blocks(xo, yo, outer[0]);
  }
  stage.gpu_threads(xi, yi);
  return xi;
}

Var gpu_tiles(Func f) {
  const std::vector<Var> args = f.args();
  return gpu_tiles(f, args[0], args[1], std::vector<VarOrRVar>(args.begin() + 2, args.end()));
}

void schedule_linear_gpu(linear_funcs& f, const module_algorithm& m) {
  const Var n = m.n, i = m.i, b = m.b;
  Var no("no"), ni("ni"), io("io"), ii("ii"), iy("iy"), ir("ir");
  const Var c = f.weight_transposed.args()[1];
  Var co("co"), ci("ci");
  f.weight_transposed.compute_root()
      .gpu_tile(n, c, no, co, ni, ci, tile_x, tile_y, TailStrategy::GuardWithIf);
  f.result.compute_root()
      .split(n, no, ni, tile_x, TailStrategy::RoundUp)
      .split(i, io, ii, tile_y * product_rows_per_thread, TailStrategy::RoundUp)
      .split(ii, iy, ir, product_rows_per_thread)
      .reorder(ir, ni, iy, no, io, b)
      .gpu_blocks(no, io, b)
      .gpu_threads(ni, iy)
      .unroll(ir);
  f.product.compute_at(f.result, ni).unroll(i);
  f.product.update().reorder(n, i, f.reduction.x, f.reduction.y).unroll(i);
}

void schedule_module_gpu(module_algorithm& m) {
  std::vector<linear_funcs*> projections = {&m.out_projection};
  if (m.desc.self_attn) projections.push_back(&m.qkv_projection);
  else projections.insert(projections.end(), {&m.q_projection, &m.k_projection, &m.v_projection});
  for (linear_funcs* f : projections) schedule_linear_gpu(*f, m);
  // Keys and values (d, g, j, b): tiles of (feature, key).
  for (Func f : {m.keys, m.values}) {
    const std::vector<Var> args = f.args();
    gpu_tiles(f.compute_root(), args[0], args[2], {args[1], args[3]});
  }

  schedule_gpu(m.attention);
  m.attention.output.compute_root();
  gpu_tiles(m.output, m.n, m.i, {m.b});

  if (m.desc.weights == weights_output::none) return;
  // Every score once, one thread per (key, query) of a head, kept for the row statistics and the
  // weights; the row maximum and sum one thread per row; each weight one thread.
  m.keys_by_feature.compute_root();
  gpu_tiles(m.keys_by_feature);
  m.score_dot.compute_at(m.scores, gpu_tiles(m.scores.compute_root()));
  schedule_row_reduction_gpu(m.row_max, m.row_max_lanes, m);
  schedule_row_reduction_gpu(m.row_sum, m.row_sum_lanes, m);
  const Var weight_thread = gpu_tiles(m.weights);
  if (m.desc.weights == weights_output::averaged) m.summed_weights.compute_at(m.weights, weight_thread);
}

}  // namespace attngen::codegen
