#include "attngen/codegen/backward.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace attngen::codegen {

using namespace Halide;

namespace {

Expr element_as_float(const ImageParam& tensor, const std::vector<Expr>& at) { return cast<float>(tensor(at)); }

// The weights and score gradients at (j, i, h, b), as Funcs of their own named after `consumer`.
recomputed_weights define_weights(const backward_algorithm& a, const attention_desc& desc, const std::string& consumer) {
  const attention_sources& src = a.forward.sources;
  const Var i = a.i, j = a.j, h = a.h, b = a.b;
  const int group = desc.group_size();
  const float scale = desc.effective_scale();
  const Expr queries = src.query_length, keys = src.key_length;
  recomputed_weights w{Func("keys_transposed_" + consumer), Func("values_transposed_" + consumer),
                       Func("dot_" + consumer), Func("weight_" + consumer), Func("value_gradient_" + consumer),
                       Func("score_gradient_" + consumer)};
  const Var x("x"), g("g");
  w.keys_transposed(j, x, g, b) = src.k(x, g, j, b);
  w.values_transposed(j, x, g, b) = src.v(x, g, j, b);
  // q pre-multiplied by the scale, as the forward's query tile is.
  const RDom qk(0, desc.qk_head_dim, "rqk_" + consumer);
  w.dot_reduction = qk;
  w.dot(j, i, h, b) = 0.0f;
  w.dot(j, i, h, b) += (src.q(qk, h, i, b) * scale) * w.keys_transposed(j, qk, h / group, b);
  const Expr score = score_at(a.forward, w.dot(j, i, h, b), j, i, h, b);
  w.weight(j, i, h, b) = select(score <= masked_score_limit, 0.0f, exp(score - a.lse(i, h, b)));
  const RDom features(0, desc.effective_v_head_dim(), "rvalue_" + consumer);
  w.value_reduction = features;
  w.value_gradient(j, i, h, b) = 0.0f;
  w.value_gradient(j, i, h, b) +=
      element_as_float(a.d_output, {features, h, i, b}) * w.values_transposed(j, features, h / group, b);
  Expr score_derivative = 1.0f;
  if (desc.has_score_mod()) {
    const modifier_leaves at{w.dot(j, i, h, b), b, h, clamp(i, 0, queries - 1), clamp(j, 0, keys - 1), queries, keys};
    score_derivative = differentiate_modifier(desc.score_modifier, desc.captures, a.forward.captures, at);
  }
  // Masked keys (weight 0) get no gradient, whatever the modifier's derivative there.
  const Expr weight = w.weight(j, i, h, b);
  w.score_gradient(j, i, h, b) =
      select(weight == 0.0f, 0.0f, weight * (w.value_gradient(j, i, h, b) - a.delta(i, h, b)) * score_derivative);
  return w;
}

// The gradient of captured tensor `tensor` (or, with -1, of the scalars): each read in the score
// modifier scatters dL/d(modified score) x d(modifier)/d(read) to the element it reads.
capture_gradient define_capture_gradient(const backward_algorithm& a, const attention_desc& desc, int tensor,
                                         const std::string& name) {
  const attention_sources& src = a.forward.sources;
  const modifier_graph& graph = desc.score_modifier;
  const bool scalars = tensor < 0;
  const int rank = scalars ? 1 : desc.captures.tensors[tensor].rank;
  capture_gradient c{Func("d_" + name + "_partial"), Func("d_" + name), {}, {}};
  std::vector<Var> at;
  for (int x = 0; x < rank; ++x) at.push_back(Var("x" + std::to_string(x)));
  const Var chunk("chunk");
  std::vector<Expr> partial_at(at.begin(), at.end());
  partial_at.push_back(chunk);
  c.partial(partial_at) = 0.0f;
  const int tile = a.tiles.query_tile;
  const Expr queries = src.query_length, keys = src.key_length;
  const Expr tiles_per_chunk = ((queries + tile - 1) / tile + capture_gradient::chunks - 1) / capture_gradient::chunks;
  for (int node = 0; node < graph.count; ++node) {
    const expr_node& read = graph.nodes[node];
    const bool reads_it = scalars ? read.op == expr_op::scalar
                                  : read.op == expr_op::tensor_read && read.name == desc.captures.tensors[tensor].name;
    if (!reads_it) continue;
    recomputed_weights w = define_weights(a, desc, name + "_" + std::to_string(node));
    RDom scores(0, keys, 0, tile, 0, tiles_per_chunk, 0, desc.num_heads, 0, a.forward.q.dim(3).extent(),
                "r" + name + "_" + std::to_string(node));
    // Rows past Lq are skipped; clamped, their reads stay inside the tensors all the same.
    const Expr row = (chunk + capture_gradient::chunks * scores[2]) * tile + scores[1];
    scores.where(row < queries);
    const Expr query = min(row, queries - 1), key = scores[0], head = scores[3], batch = scores[4];
    const Expr weight = w.weight(key, query, head, batch);
    const Expr modified_score_gradient =
        select(weight == 0.0f, 0.0f, weight * (w.value_gradient(key, query, head, batch) - a.delta(query, head, batch)));
    const modifier_leaves leaves{w.dot(key, query, head, batch), batch, head, query, key, queries, keys};
    const Expr by_read = differentiate_modifier(graph, desc.captures, a.forward.captures, leaves, node);
    // The element read: its indices (outermost first) clamped as the read clamps them, in Halide order.
    std::vector<Expr> element;
    if (scalars) {
      element.push_back(desc.captures.scalar_index(read.name));
    } else {
      const ImageParam& param = a.forward.captures.tensors[std::size_t(tensor)];
      for (int d = rank - 1; d >= 0; --d) {
        const Expr index = lower_modifier_node(graph, desc.captures, a.forward.captures, leaves, read.operands[d]);
        element.push_back(clamp(index, 0, param.dim(rank - 1 - d).extent() - 1));
      }
    }
    element.push_back(chunk);
    c.partial(element) += modified_score_gradient * by_read;
    c.scores.push_back(scores);
    c.weights.push_back(w);
  }
  const RDom chunks(0, capture_gradient::chunks, "r" + name + "_chunk");
  std::vector<Expr> summed(at.begin(), at.end());
  summed.push_back(chunks);
  c.total(at) = 0.0f;
  c.total(at) += c.partial(summed);
  return c;
}

}  // namespace

backward_algorithm define_attention_backward(const attention_desc& desc, const backward_blocking& tiles) {
  if (desc.has_sequence_lengths() || desc.has_kv_scales())  // the rule backward_dense, for any description
    throw std::invalid_argument("attention backward: queries, keys and values must be dense tensors");
  backward_algorithm a{define_attention(desc, blocking{}), tiles};
  const attention_sources& src = a.forward.sources;
  const Type element = halide_type_of(desc.element_type);
  a.output = ImageParam(element, 4, "output");
  a.lse = ImageParam(Float(32), 3, "lse");
  a.d_output = ImageParam(element, 4, "d_output");
  const Var d = a.d, e = a.e, i = a.i, j = a.j, h = a.h, g = a.g, b = a.b;
  const int group = desc.group_size(), qk_dim = desc.qk_head_dim, v_dim = desc.effective_v_head_dim();
  const float scale = desc.effective_scale();

  const RDom features(0, v_dim, "rfeature");
  a.delta(i, h, b) = 0.0f;
  a.delta(i, h, b) += element_as_float(a.d_output, {features, h, i, b}) * element_as_float(a.output, {features, h, i, b});
  a.for_dv = define_weights(a, desc, "dv");
  a.for_dk = define_weights(a, desc, "dk");
  a.for_dq = define_weights(a, desc, "dq");

  a.group_rows = RDom(0, src.query_length, 0, group, "rrow");
  const Expr row_query = a.group_rows.x, row_head = g * group + a.group_rows.y;
  a.dv_sum(e, g, j, b) = 0.0f;
  a.dv_sum(e, g, j, b) +=
      a.for_dv.weight(j, row_query, row_head, b) * element_as_float(a.d_output, {e, row_head, row_query, b});
  a.dk_sum(d, g, j, b) = 0.0f;
  a.dk_sum(d, g, j, b) += a.for_dk.score_gradient(j, row_query, row_head, b) * src.q(d, row_head, row_query, b);
  a.keys = RDom(0, src.key_length, "rkey");
  a.dq_sum(d, h, i, b) = 0.0f;
  a.dq_sum(d, h, i, b) += a.for_dq.score_gradient(a.keys, i, h, b) * src.k(d, h / group, a.keys, b);

  // The scale of q.k applies to both of its factors' gradients.
  a.dv(e, g, j, b) = cast(element, a.dv_sum(e, g, j, b));
  a.dk(d, g, j, b) = cast(element, a.dk_sum(d, g, j, b) * scale);
  a.dq(d, h, i, b) = cast(element, a.dq_sum(d, h, i, b) * scale);
  if (desc.has_sinks) {
    // A sink's logit joins each row's denominator: its gradient is -sum over rows of P_sink * delta.
    const RDom rows(0, src.query_length, 0, a.forward.q.dim(3).extent(), "rsinkrow");
    a.d_sinks(h) = 0.0f;
    a.d_sinks(h) -= exp(src.sink(h) - a.lse(rows.x, h, rows.y)) * a.delta(rows.x, h, rows.y);
  }

  a.d_captures.resize(std::size_t(desc.captures.tensor_count));
  for (int t = 0; t < desc.captures.tensor_count; ++t)
    if (desc.capture_has_gradient(t)) {
      a.d_captures[std::size_t(t)] = define_capture_gradient(a, desc, t, std::string(desc.captures.tensors[t].name.view()));
      const ImageParam& param = a.forward.captures.tensors[std::size_t(t)];
      for (int d = 0; d < param.dimensions(); ++d)
        a.d_captures[std::size_t(t)].total.output_buffer().dim(d).set_bounds(param.dim(d).min(), param.dim(d).extent());
    }
  if (desc.scalars_have_gradient()) {
    a.d_scalars = define_capture_gradient(a, desc, -1, "scalars");
    a.d_scalars.total.output_buffer().dim(0).set_bounds(0, desc.captures.scalar_count);
  }

  const int heads = desc.num_heads, kv_heads = desc.effective_kv_heads();
  a.output.dim(0).set_bounds(0, v_dim).dim(1).set_bounds(0, heads);
  a.d_output.dim(0).set_bounds(0, v_dim).dim(1).set_bounds(0, heads);
  a.lse.dim(1).set_bounds(0, heads);
  a.dq.output_buffer().dim(0).set_bounds(0, qk_dim).dim(1).set_bounds(0, heads);
  a.dk.output_buffer().dim(0).set_bounds(0, qk_dim).dim(1).set_bounds(0, kv_heads);
  a.dv.output_buffer().dim(0).set_bounds(0, v_dim).dim(1).set_bounds(0, kv_heads);
  return a;
}

std::vector<Argument> backward_algorithm::arguments() const {
  std::vector<Argument> args{forward.q, forward.k, forward.v};
  if (forward.sinks.defined()) args.push_back(forward.sinks);
  if (forward.mask.defined()) args.push_back(forward.mask);
  if (forward.key_padding.defined()) args.push_back(forward.key_padding);
  for (const Argument& capture : forward.captures.arguments()) args.push_back(capture);
  args.insert(args.end(), {output, lse, d_output});
  return args;
}

std::vector<Func> backward_algorithm::outputs() const {
  std::vector<Func> funcs{dq, dk, dv};
  if (d_sinks.defined()) funcs.push_back(d_sinks);
  for (const capture_gradient& c : d_captures)
    if (c.total.defined()) funcs.push_back(c.total);
  if (d_scalars.total.defined()) funcs.push_back(d_scalars.total);
  return funcs;
}

}  // namespace attngen::codegen
