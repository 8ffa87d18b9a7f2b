#include "peer_onednn.hpp"

#ifdef ATTNGEN_BENCH_HAS_ONEDNN

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "random_data.hpp"
#include "timing.hpp"

namespace attngen::bench {

bool onednn_available() { return true; }

namespace {

double time_onednn_primitives(const bench_case& c) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const auto& d = c.desc;
  const dt element = d.element_type == dtype::bf16 ? dt::bf16 : d.element_type == dtype::f16 ? dt::f16 : dt::f32;
  const memory::dim groups = memory::dim(c.batch) * d.effective_kv_heads();
  const memory::dim M = memory::dim(d.group_size()) * c.query_length, N = c.key_length, D = d.qk_head_dim,
                    Dv = d.effective_v_head_dim();
  // Process head groups in chunks whose score matrix stays under 1 GiB (long_causal: one at a time).
  const memory::dim per_group = M * N * 4;
  memory::dim chunk = std::max<memory::dim>(1, (memory::dim(1) << 30) / per_group);
  while (groups % chunk != 0) --chunk;

  engine cpu(engine::kind::cpu, 0);
  stream s(cpu);
  const memory::desc q_md({chunk, M, D}, element, tag::abc);
  const memory::desc kt_md({chunk, D, N}, element, tag::acb);  // K stored (N, D): the transposed view
  const memory::desc v_md({chunk, N, Dv}, element, tag::abc);
  const memory::desc scores_md({chunk, M, N}, dt::f32, tag::abc);
  const memory::desc probs_md({chunk, M, N}, element, tag::abc);
  const memory::desc out_md({chunk, M, Dv}, dt::f32, tag::abc);
  const memory::desc mask_md({1, M, N}, dt::f32, tag::abc);

  primitive_attr scaled;
  scaled.set_output_scales(0, {1.0f / std::sqrt(float(D))});
  const matmul scores_op(matmul::primitive_desc(matmul::desc(q_md, kt_md, scores_md), scaled, cpu));
  const binary mask_op(
      binary::primitive_desc(binary::desc(algorithm::binary_add, scores_md, mask_md, scores_md), cpu));
  const softmax_v2_forward softmax_op(softmax_v2_forward::primitive_desc(
      softmax_v2_forward::desc(prop_kind::forward_inference, algorithm::softmax_accurate, scores_md, probs_md, 2),
      cpu));
  const matmul output_op(matmul::primitive_desc(matmul::desc(probs_md, v_md, out_md), cpu));

  std::mt19937 rng(3);
  auto filled = [&](const memory::desc& md) {
    memory m(md, cpu);
    const dtype type = md.data_type() == dt::bf16 ? dtype::bf16 : md.data_type() == dt::f16 ? dtype::f16 : dtype::f32;
    fill_uniform(m.get_data_handle(), md.get_size() / size_of(type), type, rng);
    return m;
  };
  const memory::dim chunks = groups / chunk;
  std::vector<memory> q, k, v, out;
  for (memory::dim n = 0; n < chunks; ++n) {
    q.push_back(filled(q_md));
    out.push_back(memory(out_md, cpu));
  }
  for (memory::dim n = 0; n < chunks * c.rotated_caches; ++n) {
    k.push_back(filled(kt_md));
    v.push_back(filled(v_md));
  }
  memory scores(scores_md, cpu), probs(probs_md, cpu), mask(mask_md, cpu);
  if (c.causal()) {
    float* m = static_cast<float*>(mask.get_data_handle());
    const memory::dim offset = c.key_length - c.query_length;
    for (memory::dim row = 0; row < M; ++row)
      for (memory::dim j = 0; j < N; ++j)
        m[row * N + j] = j > row % c.query_length + offset ? -std::numeric_limits<float>::infinity() : 0.0f;
  }

  return median_seconds([&](int call) {
    const int cache = call % c.rotated_caches;
    for (memory::dim n = 0; n < chunks; ++n) {
      const std::size_t kv = std::size_t(cache * chunks + n);
      scores_op.execute(s, {{DNNL_ARG_SRC, q[n]}, {DNNL_ARG_WEIGHTS, k[kv]}, {DNNL_ARG_DST, scores}});
      if (c.causal())
        mask_op.execute(s, {{DNNL_ARG_SRC_0, scores}, {DNNL_ARG_SRC_1, mask}, {DNNL_ARG_DST, scores}});
      softmax_op.execute(s, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, probs}});
      output_op.execute(s, {{DNNL_ARG_SRC, probs}, {DNNL_ARG_WEIGHTS, v[kv]}, {DNNL_ARG_DST, out[n]}});
    }
    s.wait();
  });
}

}  // namespace

// NaN where oneDNN has no implementation for this CPU (f16 matmuls without AVX512-FP16).
double time_onednn(const bench_case& c) {
  try {
    return time_onednn_primitives(c);
  } catch (const dnnl::error&) {
    return NAN;
  }
}

}  // namespace attngen::bench

#else

namespace attngen::bench {

bool onednn_available() { return false; }
double time_onednn(const bench_case&) { return 0; }

}  // namespace attngen::bench

#endif
