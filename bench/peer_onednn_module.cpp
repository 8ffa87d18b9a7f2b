#include "module_cases.hpp"

#include <cmath>

#ifdef ATTNGEN_BENCH_HAS_ONEDNN

#include <limits>
#include <random>

#include "oneapi/dnnl/dnnl.hpp"
#include "random_data.hpp"
#include "timing.hpp"

namespace attngen::bench {

namespace {

// The module as oneDNN primitives, f32: each projection one matmul with bias (weights read in
// PyTorch's (out, in) layout), the attention as batched matmuls over (B, KVH, G, L) whose strided
// views read the projections in place (kv heads broadcast over their group), the key padding an
// additive (B, S) mask, the averaged weights a mean over heads.
double time_module_primitives(const module_bench_case& c) {
  using namespace dnnl;
  using dt = memory::data_type;
  using dims = memory::dims;
  const mha_desc& d = c.desc;
  const memory::dim B = c.batch, L = c.queries, S = c.keys, E = d.embed, H = d.num_heads,
                    KVH = d.effective_kv_heads(), G = H / KVH, hd = d.head_dim(), KVE = d.kv_embed(),
                    kdim = d.effective_kdim(), vdim = d.effective_vdim();
  engine cpu(engine::kind::cpu, 0);
  stream s(cpu);
  std::mt19937 rng(3);
  auto filled = [&](const memory::desc& md) {
    memory m(md, cpu);
    fill_uniform(m.get_data_handle(), md.get_size() / sizeof(float), dtype::f32, rng);
    return m;
  };
  auto dense = [](const dims& shape) {
    dims strides(shape.size(), 1);
    for (std::size_t n = shape.size() - 1; n-- > 0;) strides[n] = strides[n + 1] * shape[n + 1];
    return memory::desc(shape, dt::f32, strides);
  };
  // A linear layer: rows x (in) times weight (out, in) transposed, plus bias (out).
  struct linear {
    matmul op;
    memory weight, bias;
  };
  auto make_linear = [&](memory::dim rows, memory::dim in, memory::dim out) {
    const memory::desc x_md = dense({rows, in}), w_md({in, out}, dt::f32, dims{1, in}), b_md = dense({1, out});
    const matmul op(matmul::primitive_desc(matmul::desc(x_md, w_md, b_md, dense({rows, out})), cpu));
    return linear{op, filled(w_md), filled(b_md)};
  };
  const linear q_proj = make_linear(B * L, E, E), k_proj = make_linear(B * S, kdim, KVE),
               v_proj = make_linear(B * S, vdim, KVE), out_proj = make_linear(B * L, E, E);
  const memory query = filled(dense({B * L, E}));
  const memory key = d.self_attn ? query : filled(dense({B * S, kdim}));
  const memory value = d.self_attn ? query : filled(dense({B * S, vdim}));
  memory q(dense({B * L, E}), cpu), k(dense({B * S, KVE}), cpu), v(dense({B * S, KVE}), cpu),
      rows(dense({B * L, E}), cpu), output(dense({B * L, E}), cpu);

  const memory::desc q_view({B, KVH, G, L, hd}, dt::f32, dims{L * E, G * hd, hd, E, 1});
  const memory::desc kt_view({B, KVH, 1, hd, S}, dt::f32, dims{S * KVE, hd, S * KVE, 1, KVE});
  const memory::desc v_view({B, KVH, 1, S, hd}, dt::f32, dims{S * KVE, hd, S * KVE, KVE, 1});
  const memory::desc scores_md = dense({B, KVH, G, L, S}), mask_md = dense({B, 1, 1, 1, S});
  primitive_attr scaled;
  scaled.set_output_scales(0, {1.0f / std::sqrt(float(hd))});
  const matmul scores_op(matmul::primitive_desc(matmul::desc(q_view, kt_view, scores_md), scaled, cpu));
  const binary mask_op(binary::primitive_desc(binary::desc(algorithm::binary_add, scores_md, mask_md, scores_md), cpu));
  const softmax_v2_forward softmax_op(softmax_v2_forward::primitive_desc(
      softmax_v2_forward::desc(prop_kind::forward_inference, algorithm::softmax_accurate, scores_md, scores_md, 4),
      cpu));
  const matmul pv_op(matmul::primitive_desc(matmul::desc(scores_md, v_view, q_view), cpu));
  const bool padded = d.key_padding != mask_kind::none, averaged = d.weights == weights_output::averaged;
  const memory::desc weights_md = dense({B, 1, 1, L, S});
  const reduction mean_op(reduction::primitive_desc(
      reduction::desc(algorithm::reduction_mean, scores_md, weights_md, 0.0f, 0.0f), cpu));
  memory scores(scores_md, cpu), mask(mask_md, cpu), weights(weights_md, cpu);
  float* m = static_cast<float*>(mask.get_data_handle());
  for (memory::dim n = 0; n < B * S; ++n) m[n] = n % S >= S * 7 / 8 ? -std::numeric_limits<float>::infinity() : 0.0f;

  auto run_linear = [&](const linear& l, const memory& x, const memory& out) {
    l.op.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, l.weight}, {DNNL_ARG_BIAS, l.bias}, {DNNL_ARG_DST, out}});
  };
  return median_seconds([&](int) {
    run_linear(q_proj, query, q);
    run_linear(k_proj, key, k);
    run_linear(v_proj, value, v);
    const memory q_as_view(q_view, cpu, q.get_data_handle()), rows_as_view(q_view, cpu, rows.get_data_handle());
    const memory kt(kt_view, cpu, k.get_data_handle()), v_as_view(v_view, cpu, v.get_data_handle());
    scores_op.execute(s, {{DNNL_ARG_SRC, q_as_view}, {DNNL_ARG_WEIGHTS, kt}, {DNNL_ARG_DST, scores}});
    if (padded) mask_op.execute(s, {{DNNL_ARG_SRC_0, scores}, {DNNL_ARG_SRC_1, mask}, {DNNL_ARG_DST, scores}});
    softmax_op.execute(s, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}});
    pv_op.execute(s, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_WEIGHTS, v_as_view}, {DNNL_ARG_DST, rows_as_view}});
    run_linear(out_proj, rows, output);
    if (averaged) mean_op.execute(s, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, weights}});
    s.wait();
  });
}

}  // namespace

double time_onednn_module(const module_bench_case& c) {
  try {
    return time_module_primitives(c);
  } catch (const dnnl::error&) {
    return NAN;
  }
}

}  // namespace attngen::bench

#else

namespace attngen::bench {

double time_onednn_module(const module_bench_case&) { return NAN; }

}  // namespace attngen::bench

#endif
