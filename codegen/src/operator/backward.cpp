#include "attngen/codegen/backward.hpp"

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attngen::codegen {

using namespace Halide;

namespace {

// An element of the element type as float: bf16 bit patterns (attention_sources::bfloat16_as_bits)
// widened.
Expr element_as_float(const ImageParam& tensor, const std::vector<Expr>& at) {
  return tensor.type() == UInt(16) ? float_of_bfloat16_bits(tensor(at)) : cast<float>(tensor(at));
}

// The weights and score gradients at (j, i, h, b), as Funcs of their own named after `consumer`. Keys
// past Lk and queries past Lq (of tiles past the ends) weigh 0.
recomputed_weights define_weights(const backward_algorithm& a, const attention_desc& desc, const std::string& consumer) {
  const attention_sources& src = a.forward.sources;
  const Var i = a.i, j = a.j, h = a.h, b = a.b;
  const int group = desc.group_size();
  const Expr queries = src.query_length, keys = src.key_length;
  const Expr query = clamp(i, 0, queries - 1), key = clamp(j, 0, keys - 1);
  recomputed_weights w{Func("dot_" + consumer), Func("weight_" + consumer), Func("dropped_weight_" + consumer),
                       Func("value_gradient_" + consumer), Func("score_gradient_" + consumer)};
  const RDom qk(0, desc.qk_head_dim, "rqk_" + consumer);
  w.dot_reduction = qk;
  w.dot(j, i, h, b) = 0.0f;
  w.dot(j, i, h, b) += a.queries(qk, h, i, b) * a.keys_by_key(j, qk, h / group, b);
  const Expr scaled_dot = w.dot(j, i, h, b) * desc.effective_scale();
  const Expr score = score_at(a.forward, scaled_dot, key, query, h, b);
  w.weight(j, i, h, b) =
      select(score <= masked_score_limit || j >= keys || i >= queries, 0.0f, exp(score - a.saved_lse(i, h, b)));
  const RDom features(0, desc.effective_v_head_dim(), "rvalue_" + consumer);
  w.value_reduction = features;
  w.value_gradient(j, i, h, b) = 0.0f;
  w.value_gradient(j, i, h, b) += a.output_gradient(features, h, i, b) * a.values_by_key(j, features, h / group, b);
  // Dropout scales each weight's value (0 where dropped): the weight's share of dV and its dP.
  Expr value_gradient = w.value_gradient(j, i, h, b);
  if (src.value_weight_factor.defined()) {
    const Expr factor = src.value_weight_factor(key, query, h, b);
    w.dropped_weight(j, i, h, b) = w.weight(j, i, h, b) * factor;
    value_gradient *= factor;
  } else {
    w.dropped_weight(j, i, h, b) = w.weight(j, i, h, b);
  }
  Expr score_derivative = 1.0f;
  if (desc.has_score_mod()) {
    const modifier_leaves at{scaled_dot, b, h, query, key, queries, keys};
    score_derivative = differentiate_modifier(desc.score_modifier, desc.captures, a.forward.captures, at);
  }
  // Masked keys (weight 0) get no gradient, whatever the modifier's derivative there. The product in
  // IEEE order: with LLVM free to reassociate it, its loop-invariant factors (a softcap's cap and
  // 1/cap) were grouped by the loop nest around it, and one pass and two wrote dK 1-2 ulp apart (AVX2).
  const Expr weight = w.weight(j, i, h, b);
  w.score_gradient(j, i, h, b) =
      select(weight == 0.0f, 0.0f, strict_float(weight * (value_gradient - a.delta(i, h, b)) * score_derivative));
  return w;
}

// Under causality, whether some query of tile `tile` may see a key of block `block`; undefined
// without causality (every block is seen).
Expr tile_sees_block(const backward_algorithm& a, const attention_desc& desc, const Expr& tile, const Expr& block) {
  if (!desc.is_causal()) return Expr();
  const attention_sources& src = a.forward.sources;
  Expr last_visible_key = tile * a.tiles.query_tile + (a.tiles.query_tile - 1) + src.causal_offset;
  if (!Internal::is_const_zero(src.causally_free_keys)) last_visible_key = max(last_visible_key, src.causally_free_keys - 1);
  return block * a.tiles.key_block <= last_visible_key;
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
    const modifier_leaves leaves{w.dot(key, query, head, batch) * desc.effective_scale(), batch, head, query, key,
                                 queries, keys};
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

// The gradients of the algorithm's sources from its saved_output, saved_lse and output_gradient,
// which the caller has defined; `as_element` converts a float gradient to dq's, dk's and dv's type.
void define_gradients(backward_algorithm& a, const std::function<Expr(Expr)>& as_element) {
  const attention_desc& desc = a.forward.desc;
  const attention_sources& src = a.forward.sources;
  const Var d = a.d, e = a.e, x = a.x, i = a.i, j = a.j, h = a.h, g = a.g, z = a.z, b = a.b;
  const Var ii = a.ii, it = a.it, jj = a.jj, jb = a.jb;
  const int group = desc.group_size(), qk_dim = desc.qk_head_dim, v_dim = desc.effective_v_head_dim();
  const int key_block = a.tiles.key_block, query_tile = a.tiles.query_tile;
  const float scale = desc.effective_scale();
  const Expr queries = src.query_length, keys = src.key_length;
  const Expr query = clamp(i, 0, queries - 1), key = clamp(j, 0, keys - 1);

  a.keys_by_key(j, d, g, b) = cast<float>(src.k(d, g, key, b));
  a.values_by_key(j, e, g, b) = cast<float>(src.v(e, g, key, b));
  a.keys_by_row(d, j, g, b) = cast<float>(src.k(d, g, key, b));
  a.queries(d, h, i, b) = cast<float>(src.q(d, h, query, b));
  a.delta_features = RDom(0, v_dim, "rfeature");
  const RDom& features = a.delta_features;
  a.delta(i, h, b) = 0.0f;
  a.delta(i, h, b) += a.output_gradient(features, h, i, b) * a.saved_output(features, h, i, b);
  a.for_keys = define_weights(a, desc, "keys");
  a.for_dq = a.tiles.one_pass ? a.for_keys : define_weights(a, desc, "dq");

  // dK and dV of key jj of block jb: sums over one query tile and head of the group (a register tile's).
  a.tile_rows = RDom(0, query_tile, "rtilerow");
  const RDom& tile_rows = a.tile_rows;
  const Expr block_key = jb * key_block + jj;
  const Expr row_query = it * query_tile + tile_rows, row_head = g * group + z;
  // With D != Dv, x runs over the larger: the other's features are clamped (and never stored).
  const Expr q_feature = qk_dim < v_dim ? min(x, qk_dim - 1) : Expr(x);
  const Expr v_feature = v_dim < qk_dim ? min(x, v_dim - 1) : Expr(x);
  a.dk_tile_sums(x, jj, jb, it, z, g, b) = 0.0f;
  a.dk_tile_sums(x, jj, jb, it, z, g, b) += a.for_keys.score_gradient(block_key, row_query, row_head, b) *
                                            a.queries(q_feature, row_head, row_query, b);
  a.dv_tile_sums(x, jj, jb, it, z, g, b) = 0.0f;
  a.dv_tile_sums(x, jj, jb, it, z, g, b) += a.for_keys.dropped_weight(block_key, row_query, row_head, b) *
                                            a.output_gradient(v_feature, row_head, row_query, b);

  // dQ of query ii of tile it: sums over one key block (a register tile's).
  a.block_keys = RDom(0, key_block, "rblockkey");
  const RDom& block_keys = a.block_keys;
  const Expr column_key = jb * key_block + block_keys, tile_query = it * query_tile + ii;
  a.dq_block_sums(d, ii, it, jb, h, b) = 0.0f;
  a.dq_block_sums(d, ii, it, jb, h, b) += a.for_dq.score_gradient(column_key, tile_query, h, b) *
                                          a.keys_by_row(d, column_key, h / group, b);

  const Expr query_tiles = (queries + query_tile - 1) / query_tile, key_blocks = (keys + key_block - 1) / key_block;
  // The scale of q.k applies to both of its factors' gradients.
  if (a.tiles.one_pass) {
    // Every sum of a (key block, query tile, head) in one update, whose kind picks the sum and the
    // slot it adds to: one set of weights serves dK, dV and dQ.
    a.pass = RDom(0, 3, 0, group, 0, query_tiles, 0, key_blocks, "rpass");
    const Expr kind = a.pass.x, head = a.pass.y, tile = a.pass.z, block = a.pass.w;
    if (const Expr seen = tile_sees_block(a, desc, tile, block); seen.defined()) a.pass.where(seen);
    const Expr of_keys = kind < 2, row_block = select(of_keys, block, tile), slot = select(of_keys, kind, 2 + head);
    const Var row = jj, slot_var = a.slot;
    a.pass_sums(x, row, jb, slot_var, g, b) = 0.0f;
    a.pass_sums(x, row, row_block, slot, g, b) +=
        select(kind == 0, a.dk_tile_sums(x, row, block, tile, head, g, b),
               kind == 1, a.dv_tile_sums(x, row, block, tile, head, g, b),
               a.dq_block_sums(q_feature, row, tile, block, g * group + head, b));
    a.dk(d, g, j, b) = as_element(a.pass_sums(d, j % key_block, j / key_block, 0, g, b) * scale);
    a.dv(e, g, j, b) = as_element(a.pass_sums(e, j % key_block, j / key_block, 1, g, b));
    a.dq(d, h, i, b) = as_element(a.pass_sums(d, i % query_tile, i / query_tile, 2 + h % group, h / group, b) * scale);
    return;
  }
  // dK and dV added over the tiles and heads as a pair; dQ over the key blocks.
  a.key_rows = RDom(0, query_tiles, 0, group, "rrow");
  if (const Expr seen = tile_sees_block(a, desc, a.key_rows.x, jb); seen.defined()) a.key_rows.where(seen);
  const Expr tile = a.key_rows.x, head_in_group = a.key_rows.y;
  a.key_sums(x, jj, jb, g, b) = Tuple(0.0f, 0.0f);
  a.key_sums(x, jj, jb, g, b) =
      Tuple(a.key_sums(x, jj, jb, g, b)[0] + a.dk_tile_sums(x, jj, jb, tile, head_in_group, g, b),
            a.key_sums(x, jj, jb, g, b)[1] + a.dv_tile_sums(x, jj, jb, tile, head_in_group, g, b));
  a.query_columns = RDom(0, key_blocks, "rcolumn");
  if (const Expr seen = tile_sees_block(a, desc, it, a.query_columns); seen.defined()) a.query_columns.where(seen);
  a.dq_sum(d, ii, it, h, b) = 0.0f;
  a.dq_sum(d, ii, it, h, b) += a.dq_block_sums(d, ii, it, a.query_columns, h, b);
  a.dk(d, g, j, b) = as_element(a.key_sums(d, j % key_block, j / key_block, g, b)[0] * scale);
  a.dv(e, g, j, b) = as_element(a.key_sums(e, j % key_block, j / key_block, g, b)[1]);
  a.dq(d, h, i, b) = as_element(a.dq_sum(d, i % query_tile, i / query_tile, h, b) * scale);
}

}  // namespace

backward_algorithm define_attention_backward(const attention_desc& desc, const backward_blocking& tiles,
                                             bool bfloat16_as_bits) {
  if (desc.has_sequence_lengths() || desc.has_kv_scales())  // the rule backward_dense, for any description
    throw std::invalid_argument("attention backward: queries, keys and values must be dense tensors");
  backward_algorithm a{define_attention(desc, blocking{}, bfloat16_as_bits), tiles};
  const attention_sources& src = a.forward.sources;
  const bool as_bits = src.bfloat16_as_bits;
  const Type element = as_bits ? UInt(16) : halide_type_of(desc.element_type);
  a.output = ImageParam(element, 4, "output");
  a.lse = ImageParam(Float(32), 3, "lse");
  a.d_output = ImageParam(element, 4, "d_output");
  const Var e = a.e, i = a.i, h = a.h, b = a.b;
  const Expr query = clamp(i, 0, src.query_length - 1);
  a.saved_output(e, h, i, b) = element_as_float(a.output, {e, h, query, b});
  a.saved_lse(i, h, b) = a.lse(query, h, b);
  a.output_gradient(e, h, i, b) = element_as_float(a.d_output, {e, h, query, b});
  define_gradients(a, [&](Expr value) { return as_bits ? bfloat16_bits_of(value) : cast(element, value); });
  const int qk_dim = desc.qk_head_dim, v_dim = desc.effective_v_head_dim();
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

backward_algorithm define_backward_of(attention_algorithm forward, const backward_blocking& tiles,
                                      const Func& output, const Func& lse, const Func& d_output) {
  backward_algorithm a{std::move(forward), tiles};
  const Var e = a.e, i = a.i, h = a.h, b = a.b;
  const Expr query = clamp(i, 0, a.forward.sources.query_length - 1);
  a.saved_output(e, h, i, b) = output(e, h, query, b);
  a.saved_lse(i, h, b) = lse(query, h, b);
  a.output_gradient(e, h, i, b) = d_output(e, h, query, b);
  define_gradients(a, [](Expr value) { return value; });
  return a;
}

row_log_sum_exp define_row_log_sum_exp(const attention_algorithm& forward) {
  const attention_desc& desc = forward.desc;
  const attention_sources& src = forward.sources;
  const Var i("i"), j("j"), h("h"), b("b");
  row_log_sum_exp r{Func("lse_dot"), Func("lse_state"), Func("row_lse")};
  const Expr query = clamp(i, 0, src.query_length - 1);
  r.features = RDom(0, desc.qk_head_dim, "rlsefeature");
  r.dot(j, i, h, b) = 0.0f;
  r.dot(j, i, h, b) += src.q(r.features, h, query, b) * src.k(r.features, h / desc.group_size(), j, b);
  r.keys = RDom(0, src.key_length, "rlsekey");
  const Expr score = score_at(forward, r.dot(r.keys, i, h, b) * desc.effective_scale(), r.keys, query, h, b);
  // The online maximum and sum of exponentials, one pass over the keys; masked scores add nothing.
  r.state(i, h, b) = Tuple(masked_score_limit, 0.0f);
  const Expr running_max = r.state(i, h, b)[0], running_sum = r.state(i, h, b)[1];
  const Expr new_max = max(running_max, score);
  r.state(i, h, b) = Tuple(new_max, running_sum * exp(running_max - new_max) +
                                        select(score <= masked_score_limit, 0.0f, exp(score - new_max)));
  // A row with no visible key gets the floor: its weights are 0 whatever it is.
  r.lse(i, h, b) = select(r.state(i, h, b)[1] > 0.0f, r.state(i, h, b)[0] + log(r.state(i, h, b)[1]), masked_score_limit);
  return r;
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
