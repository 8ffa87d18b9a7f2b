#include "attngen/codegen/module_backward.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/schedule_gpu.hpp"
#include "gpu_tiles.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// A (n) vector and its sum over `terms`: a thread per element.
void schedule_vector_gpu(Func& f, const Var& n, const std::vector<RVar>& terms) {
  Var no("no"), ni("ni");
  f.compute_root().gpu_tile(n, no, ni, 64, TailStrategy::GuardWithIf);
  std::vector<VarOrRVar> order(terms.begin(), terms.end());
  order.push_back(n);
  f.update().reorder(order).gpu_tile(n, no, ni, 64, TailStrategy::GuardWithIf);
}

// A forward projection: the result in tiles of 8 rows x one vector of outputs per task, each tile's
// sums over the inputs in registers.
void schedule_projection_cpu(linear_funcs& f, const module_algorithm& m, int lanes) {
  const Var n = m.n, i = m.i, b = m.b;
  Var no("no"), ni("ni"), io("io"), ii("ii");
  constexpr int rows = 8;
  f.weight_transposed.compute_root().parallel(f.weight_transposed.args()[1]).vectorize(n, lanes, TailStrategy::GuardWithIf);
  f.result.compute_root()
      .split(n, no, ni, lanes, TailStrategy::GuardWithIf)
      .split(i, io, ii, rows, TailStrategy::GuardWithIf)
      .reorder(ni, ii, no, io, b)
      .parallel(b)
      .parallel(io)
      .vectorize(ni);
  f.product.compute_at(f.result, no).vectorize(n, lanes, TailStrategy::GuardWithIf);
  f.product.update()
      .reorder(n, i, f.reduction.x, f.reduction.y)
      .vectorize(n, lanes, TailStrategy::GuardWithIf)
      .unroll(i, rows, TailStrategy::GuardWithIf);
}

// A linear layer's gradients: dx rows in parallel, dW output features in parallel, each summing its
// rows in order (a vector of input features at a time), dbias a vector of outputs at a time.
void schedule_linear_gradients_cpu(linear_gradients& g, const module_algorithm& m, int lanes) {
  const Var c = m.c, n = m.n, i = m.i, b = m.b;
  g.input.compute_root().parallel(b).parallel(i).vectorize(c, lanes, TailStrategy::GuardWithIf);
  g.input.update().reorder(c, g.outputs.x, i, b).parallel(b).parallel(i).vectorize(c, lanes, TailStrategy::GuardWithIf);
  g.weight.compute_root().parallel(n).vectorize(c, lanes, TailStrategy::GuardWithIf);
  g.weight.update().reorder(c, g.rows.x, g.rows.y, n).parallel(n).vectorize(c, lanes, TailStrategy::GuardWithIf);
  g.bias.compute_root().vectorize(n, lanes, TailStrategy::GuardWithIf);
  g.bias.update().reorder(n, g.rows.x, g.rows.y).vectorize(n, lanes, TailStrategy::GuardWithIf);
}

// A linear layer's gradients on a GPU: a thread per element of dx (c, i, b), of dW (c, n) and of
// dbias (n), each summing its terms in order.
void schedule_linear_gradients_gpu(linear_gradients& g, const module_algorithm& m) {
  const Var c = m.c, n = m.n, i = m.i, b = m.b;
  g.input.compute_root();
  gpu_tiles(g.input, c, i, {b});
  gpu_tiles(g.input.update().reorder(g.outputs.x, c, i, b), c, i, {b});
  g.weight.compute_root();
  for (Stage stage : {Stage(g.weight), g.weight.update().reorder(g.rows.x, g.rows.y, c, n)})
    stage.gpu_tile(c, n, Var("co"), Var("no"), Var("ci"), Var("ni"), tile_x, tile_y, TailStrategy::GuardWithIf);
  schedule_vector_gpu(g.bias, n, {g.rows.x, g.rows.y});
}

}  // namespace

void schedule_module_backward_cpu(module_backward_algorithm& a, const Target& target) {
  const int lanes = target.natural_vector_size<float>();
  module_algorithm& m = a.forward;
  if (m.desc.self_attn) {
    schedule_projection_cpu(m.qkv_projection, m, lanes);
  } else {
    for (linear_funcs* f : {&m.q_projection, &m.k_projection, &m.v_projection}) schedule_projection_cpu(*f, m, lanes);
  }
  schedule_cpu(m.attention);
  m.attention.output.compute_root();
  // Each row's log-sum-exp: a vector of rows at a time, over the keys in order.
  {
    row_log_sum_exp& r = a.lse;
    const Var i = r.state.args()[0], h = r.state.args()[1], b = r.state.args()[2];
    r.state.compute_root().parallel(b).parallel(h).vectorize(i, lanes, TailStrategy::GuardWithIf);
    r.state.update().parallel(b).parallel(h).vectorize(i, lanes, TailStrategy::GuardWithIf);
    r.dot.compute_at(r.state, r.keys.x).vectorize(r.dot.args()[1], lanes, TailStrategy::GuardWithIf);
    r.dot.update().vectorize(r.dot.args()[1], lanes, TailStrategy::GuardWithIf);
    r.lse.compute_root().parallel(b).vectorize(i, lanes, TailStrategy::GuardWithIf);
  }
  schedule_backward_cpu(a.attention, target);
  for (linear_gradients* g : {&a.out_projection, &a.q_projection, &a.k_projection, &a.v_projection})
    schedule_linear_gradients_cpu(*g, m, lanes);
  if (m.desc.bias_kv)
    for (Func* f : {&a.bias_k_gradient, &a.bias_v_gradient}) {
      f->compute_root().vectorize(m.n, lanes, TailStrategy::GuardWithIf);
      f->update().vectorize(m.n, lanes, TailStrategy::GuardWithIf);
    }
  for (Func& f : a.gradients) f.compute_root().vectorize(f.args()[0], lanes, TailStrategy::GuardWithIf);
}

void schedule_module_backward_gpu(module_backward_algorithm& a) {
  module_algorithm& m = a.forward;
  if (m.desc.self_attn) {
    schedule_linear_gpu(m.qkv_projection, m);
  } else {
    for (linear_funcs* f : {&m.q_projection, &m.k_projection, &m.v_projection}) schedule_linear_gpu(*f, m);
  }
  // Keys and values (d, g, j, b): tiles of (feature, key).
  for (Func f : {m.keys, m.values}) {
    const std::vector<Var> args = f.args();
    gpu_tiles(f.compute_root(), args[0], args[2], {args[1], args[3]});
  }
  schedule_gpu(m.attention);
  m.attention.output.compute_root();
  // Each row's log-sum-exp: a thread per row, over the keys in order.
  {
    row_log_sum_exp& r = a.lse;
    const Var i = r.state.args()[0], h = r.state.args()[1], b = r.state.args()[2];
    Var io("io"), ii("ii");
    r.state.compute_root();
    for (Stage stage : {Stage(r.state), r.state.update()})
      stage.split(i, io, ii, tile_x, TailStrategy::GuardWithIf).gpu_blocks(io, h, b).gpu_threads(ii);
    r.dot.compute_at(r.state, r.keys.x);
    gpu_tiles(r.lse.compute_root());
  }
  schedule_backward_gpu(a.attention);
  for (linear_gradients* g : {&a.out_projection, &a.q_projection, &a.k_projection, &a.v_projection})
    schedule_linear_gradients_gpu(*g, m);
  if (m.desc.bias_kv)
    for (Func* f : {&a.bias_k_gradient, &a.bias_v_gradient}) schedule_vector_gpu(*f, m.n, {a.appended_batch.x});
  // The outputs: vectors in runs of 64 threads, matrices in 32 x 8 tiles, sequences those per batch.
  for (Func& f : a.gradients) {
    const std::vector<Var> args = f.args();
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
    f.compute_root();
    if (args.size() == 1) f.gpu_tile(args[0], xo, xi, 64, TailStrategy::GuardWithIf);
    else if (args.size() == 2) f.gpu_tile(args[0], args[1], xo, yo, xi, yi, tile_x, tile_y, TailStrategy::GuardWithIf);
    else gpu_tiles(f);
  }
}

}  // namespace attngen::codegen
