#include "attngen/codegen/module_algorithm.hpp"

#include <cmath>
#include <string>

namespace attngen::codegen {

using namespace Halide;

namespace {

Expr mix_bits(Expr x) {
  x = x ^ (x >> 16);
  x = x * Internal::make_const(UInt(32), 0x7feb352dU);
  x = x ^ (x >> 15);
  x = x * Internal::make_const(UInt(32), 0x846ca68bU);
  return x ^ (x >> 16);
}

// An element of an input tensor as float (bf16 bits are widened).
Expr as_float(const module_algorithm& m, Expr element) {
  return m.bfloat16_as_bits ? float_of_bfloat16_bits(element) : cast<float>(element);
}

// An output element of the description's type from float (bf16 as bits rounded to nearest even).
Expr as_element(const module_algorithm& m, Expr value) {
  return m.bfloat16_as_bits ? bfloat16_bits_of(value) : cast(halide_type_of(m.desc.element_type), value);
}

// Element (feature, position, batch) of a (B, L, F) or (L, B, F) input, as float.
Expr sequence_at(const module_algorithm& m, const ImageParam& t, Expr feature, Expr position, Expr batch) {
  return as_float(m, m.desc.batch_major ? t(feature, position, batch) : t(feature, batch, position));
}

// `x` is (c, i, b), or with `groups` > 1 (c within group, group, i, b) as the attention's output is.
// Reads of rows, outputs and weights are clamped into range, so the schedule may compute whole tiles
// past the ends (their results are never read).
// `weight` is (c, n) float, PyTorch's (out, in) layout; `bias` (n) float, or undefined.
linear_funcs define_linear(const std::string& name, const Func& x, int groups, Expr rows, const Func& weight,
                           const Func& bias, int inputs, int outputs, const module_algorithm& m) {
  const Var n = m.n, c = m.c, i = m.i, b = m.b;
  const int per_group = inputs / groups;
  linear_funcs f;
  f.weight_transposed = Func(name + "_weight_t");
  f.weight_transposed(n, c) = weight(c, min(n, outputs - 1));
  f.reduction = RDom(0, per_group, 0, groups, name + "_r");
  const Expr row = clamp(i, 0, rows - 1);
  const Expr input = groups == 1 ? x(f.reduction.x, row, b) : x(f.reduction.x, f.reduction.y, row, b);
  f.product = Func(name + "_product");
  f.product(n, i, b) = 0.0f;
  f.product(n, i, b) += input * f.weight_transposed(n, f.reduction.y * per_group + f.reduction.x);
  f.result = Func(name);
  f.result(n, i, b) = bias.defined() ? f.product(n, i, b) + bias(min(n, outputs - 1)) : f.product(n, i, b);
  return f;
}

// The attn_mask's element for input key `key` (in range) of (query, head, batch).
Expr attn_mask_at(const module_algorithm& m, Expr key, Expr query, Expr head, Expr batch) {
  switch (m.desc.mask_dims) {
    case attn_mask_shape::l_s: return m.mask(key, query);
    case attn_mask_shape::bh_l_s: return m.mask(key, query, batch * m.desc.num_heads + head);
    case attn_mask_shape::b_h_l_s: return m.mask(key, query, head, batch);
    case attn_mask_shape::none: break;
  }
  return Expr();
}

int attn_mask_rank(attn_mask_shape shape) {
  switch (shape) {
    case attn_mask_shape::l_s: return 2;
    case attn_mask_shape::bh_l_s: return 3;
    case attn_mask_shape::b_h_l_s: return 4;
    case attn_mask_shape::none: break;
  }
  return 0;
}

// The attention's sources: projected queries, keys and values, the masks on input keys (appended keys
// are never masked), and dropout.
attention_sources module_sources(module_algorithm& m) {
  const mha_desc& desc = m.desc;
  const int head_dim = desc.head_dim();
  const int extra = desc.extra_keys();
  Var d("d"), g("g"), j = m.j, i = m.i, h = m.h, b = m.b;
  attention_sources src;
  src.q(d, h, i, b) = m.projected_q(h * head_dim + d, i, b);

  // Kernel key j < extra is an appended key: bias_k / bias_v first (when present), then zeros.
  auto with_appended = [&](Func& f, const std::string& name, const Func& projection, const ImageParam& bias) {
    f = Func(name);
    const Expr projected = projection(g * head_dim + d, max(j - extra, 0), b);
    if (extra == 0) {
      f(d, g, j, b) = projected;
      return;
    }
    const Expr appended = bias.defined() ? select(j == 0, as_float(m, bias(g * head_dim + d)), 0.0f) : Expr(0.0f);
    f(d, g, j, b) = select(j < extra, appended, projected);
  };
  with_appended(m.keys, "keys", m.projected_k, m.bias_k);
  with_appended(m.values, "values", m.projected_v, m.bias_v);
  src.k = m.keys;
  src.v = m.values;
  src.query_length = m.query_length;
  src.key_length = m.key_length;
  // The output projection's weight is E x E (checked by the runtime): a zero Halide cannot prove,
  // present in every module, self-attention included.
  src.unproven_zero = min(m.out_weight.dim(0).extent() - m.out_weight.dim(1).extent(), 0);
  src.causal_offset = desc.causal_mode == causal_alignment::bottom_right ? m.key_length - m.query_length : Expr(extra);
  src.causally_free_keys = extra;

  const Expr is_input_key = j >= extra;
  const Expr input_key = max(j - extra, 0);
  auto on_input_keys = [&](Expr e, Expr otherwise) { return extra == 0 ? e : select(is_input_key, e, otherwise); };
  Expr hidden, additive;
  if (desc.mask == mask_kind::boolean) hidden = attn_mask_at(m, input_key, i, h, b) != 0;
  if (desc.mask == mask_kind::additive) additive = as_float(m, attn_mask_at(m, input_key, i, h, b));
  if (desc.key_padding == mask_kind::boolean) {
    const Expr padded = m.key_padding(input_key, b) != 0;
    hidden = hidden.defined() ? (hidden || padded) : padded;
  }
  if (desc.key_padding == mask_kind::additive) {
    const Expr padding = as_float(m, m.key_padding(input_key, b));
    additive = additive.defined() ? additive + padding : padding;
  }
  if (hidden.defined()) src.hidden(j, i, h, b) = on_input_keys(hidden, Internal::const_false());
  if (additive.defined()) src.additive(j, i, h, b) = on_input_keys(additive, 0.0f);

  if (desc.has_dropout()) {
    const Expr column = extra == 0 ? Expr(j) : select(is_input_key, j - extra, m.input_key_length + j);
    const Expr kept = dropout_bits(m.seed, b, h, i, column, desc.num_heads) >= Internal::make_const(UInt(32), dropout_threshold(desc.dropout_p));
    const float kept_scale = 1.0f / (1.0f - desc.dropout_p);
    src.value_weight_factor(j, i, h, b) = select(m.training, select(kept, kept_scale, 0.0f), 1.0f);
  }
  return src;
}

}  // namespace

Expr dropout_bits(Expr seed, Expr batch, Expr head, Expr query, Expr column, int heads) {
  const Expr seed_low = cast<uint32_t>(seed);
  const Expr seed_high = cast<uint32_t>(seed >> 32);
  const Expr row = mix_bits(seed_low ^ mix_bits(seed_high ^ mix_bits(cast<uint32_t>(batch) * heads +
                                                                      cast<uint32_t>(head))));
  return mix_bits(mix_bits(row ^ cast<uint32_t>(query)) ^ mix_bits(cast<uint32_t>(column)));
}

std::vector<Argument> module_algorithm::arguments() const {
  std::vector<Argument> args = {query};
  if (!desc.self_attn) args.insert(args.end(), {key, value});
  args.insert(args.end(), {q_weight, k_weight, v_weight});
  if (desc.projection_bias) args.insert(args.end(), {q_bias, k_bias, v_bias});
  if (desc.bias_kv) args.insert(args.end(), {bias_k, bias_v});
  args.push_back(out_weight);
  if (desc.projection_bias) args.push_back(out_bias);
  if (desc.key_padding != mask_kind::none) args.push_back(key_padding);
  if (desc.mask != mask_kind::none) args.push_back(mask);
  if (desc.has_dropout()) args.insert(args.end(), {training, seed});
  return args;
}

std::vector<Func> module_algorithm::outputs() const {
  std::vector<Func> funcs = {output};
  if (desc.weights != weights_output::none) funcs.push_back(weights);
  return funcs;
}

module_algorithm define_module(const mha_desc& desc, const blocking& tiles, bool bfloat16_as_bits) {
  module_algorithm m;
  m.desc = desc;
  m.bfloat16_as_bits = bfloat16_as_bits && desc.element_type == dtype::bf16;
  const Type element = m.bfloat16_as_bits ? UInt(16) : halide_type_of(desc.element_type);
  const int embed = desc.embed, kv_embed = desc.kv_embed(), head_dim = desc.head_dim();
  const bool batch_first = desc.batch_major;
  const Var c = m.c, n = m.n, i = m.i, j = m.j, h = m.h, b = m.b;

  m.query = ImageParam(element, 3, "query");
  if (!desc.self_attn) {
    m.key = ImageParam(element, 3, "key");
    m.value = ImageParam(element, 3, "value");
  }
  m.q_weight = ImageParam(element, 2, "q_weight");
  m.k_weight = ImageParam(element, 2, "k_weight");
  m.v_weight = ImageParam(element, 2, "v_weight");
  m.out_weight = ImageParam(element, 2, "out_weight");
  if (desc.projection_bias) {
    m.q_bias = ImageParam(element, 1, "q_bias");
    m.k_bias = ImageParam(element, 1, "k_bias");
    m.v_bias = ImageParam(element, 1, "v_bias");
    m.out_bias = ImageParam(element, 1, "out_bias");
  }
  if (desc.bias_kv) {
    m.bias_k = ImageParam(element, 1, "bias_k");
    m.bias_v = ImageParam(element, 1, "bias_v");
  }
  if (desc.key_padding != mask_kind::none)
    m.key_padding = ImageParam(desc.key_padding == mask_kind::boolean ? UInt(8) : element, 2, "key_padding");
  if (desc.mask != mask_kind::none)
    m.mask = ImageParam(desc.mask == mask_kind::boolean ? UInt(8) : element, attn_mask_rank(desc.mask_dims), "attn_mask");

  const int sequence_dim = batch_first ? 1 : 2;
  m.query_length = m.query.dim(sequence_dim).extent();
  m.input_key_length = desc.self_attn ? m.query_length : m.key.dim(sequence_dim).extent();
  m.key_length = m.input_key_length + desc.extra_keys();

  // Weights and biases as float Funcs (an undefined Func for an absent bias).
  auto float_vector = [&](const ImageParam& p) {
    Func f;
    if (p.defined()) {
      f = Func(p.name() + "_float");
      f(n) = as_float(m, p(n));
    }
    return f;
  };
  auto float_matrix = [&](const ImageParam& p) {
    Func f(p.name() + "_float");
    f(c, n) = as_float(m, p(c, n));
    return f;
  };
  Func query_in("query_in");
  query_in(c, i, b) = sequence_at(m, m.query, c, i, b);
  m.projected_q = Func("projected_q");
  m.projected_k = Func("projected_k");
  m.projected_v = Func("projected_v");
  if (desc.self_attn) {
    // One projection over the packed weights (PyTorch's in_proj_weight): the input is read once.
    // Reads are clamped into each weight's rows: bounds inference takes every side of a select.
    const int outputs = embed + 2 * kv_embed;
    Func packed_weight("packed_weight"), packed_bias("packed_bias");
    const Expr k_row = clamp(n - embed, 0, kv_embed - 1), v_row = clamp(n - embed - kv_embed, 0, kv_embed - 1);
    packed_weight(c, n) = select(n < embed, as_float(m, m.q_weight(c, min(n, embed - 1))),
                                 n < embed + kv_embed, as_float(m, m.k_weight(c, k_row)), as_float(m, m.v_weight(c, v_row)));
    if (desc.projection_bias)
      packed_bias(n) = select(n < embed, as_float(m, m.q_bias(min(n, embed - 1))),
                              n < embed + kv_embed, as_float(m, m.k_bias(k_row)), as_float(m, m.v_bias(v_row)));
    m.qkv_projection = define_linear("qkv_projection", query_in, 1, m.query_length, packed_weight, packed_bias,
                                     embed, outputs, m);
    m.projected_q(n, i, b) = m.qkv_projection.result(n, i, b);
    m.projected_k(n, i, b) = m.qkv_projection.result(n + embed, i, b);
    m.projected_v(n, i, b) = m.qkv_projection.result(n + embed + kv_embed, i, b);
  } else {
    Func key_in("key_in"), value_in("value_in");
    key_in(c, i, b) = sequence_at(m, m.key, c, i, b);
    value_in(c, i, b) = sequence_at(m, m.value, c, i, b);
    m.q_projection = define_linear("q_projection", query_in, 1, m.query_length, float_matrix(m.q_weight),
                                   float_vector(m.q_bias), embed, embed, m);
    m.k_projection = define_linear("k_projection", key_in, 1, m.input_key_length, float_matrix(m.k_weight),
                                   float_vector(m.k_bias), desc.effective_kdim(), kv_embed, m);
    m.v_projection = define_linear("v_projection", value_in, 1, m.input_key_length, float_matrix(m.v_weight),
                                   float_vector(m.v_bias), desc.effective_vdim(), kv_embed, m);
    m.projected_q(n, i, b) = m.q_projection.result(n, i, b);
    m.projected_k(n, i, b) = m.k_projection.result(n, i, b);
    m.projected_v(n, i, b) = m.v_projection.result(n, i, b);
  }

  // The attention's result stays float32 on its way to the output projection. The weights output
  // normalises its own rows (it computes every score of a row anyway).
  const attention_desc op = desc.attention_operator().element(dtype::f32);
  m.attention = define_attention(op, tiles, module_sources(m));

  // The attention's output (e, h, i, b) is the output projection's input, head by head.
  m.out_projection = define_linear("out_projection", m.attention.output, desc.num_heads, m.query_length,
                                   float_matrix(m.out_weight), float_vector(m.out_bias), embed, embed, m);
  m.output = Func("output");
  if (batch_first)
    m.output(n, i, b) = as_element(m, m.out_projection.result(n, i, b));
  else
    m.output(n, b, i) = as_element(m, m.out_projection.result(n, i, b));

  if (desc.weights != weights_output::none) {
    const attention_sources& src = m.attention.sources;
    const int group = desc.num_heads / desc.effective_kv_heads();
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    m.score_reduction = RDom(0, head_dim, "weights_rd");
    Var d("d"), g("g");
    m.keys_by_feature = Func("keys_by_feature");
    m.keys_by_feature(j, d, g, b) = src.k(d, g, j, b);
    m.score_dot = Func("score_dot");
    m.score_dot(j, i, h, b) = 0.0f;
    m.score_dot(j, i, h, b) += src.q(m.score_reduction, h, i, b) * m.keys_by_feature(j, m.score_reduction, h / group, b);
    m.scores = Func("scores");
    m.scores(j, i, h, b) = score_at(m.attention, m.score_dot(j, i, h, b) * scale, j, i, h, b);

    // Column `column` of PyTorch's weights is kernel key `kernel_key`: input keys first there.
    const int extra = desc.extra_keys();
    const Var column = m.column;
    // Clamped so that bounds inference, which takes both sides of the select, stays within the keys.
    const Expr kernel_key =
        extra == 0 ? Expr(column)
                   : clamp(select(column < m.input_key_length, column + extra, column - m.input_key_length), 0,
                           m.key_length - 1);
    // Each row's softmax over its S' scores; masked scores weigh exactly 0 (a fully masked row is 0).
    // Lane-parallel partial maxima and sums over whole vectors of keys (keys past S' score as masked),
    // then across the lanes.
    const int lanes = tiles.lanes;
    m.weights_row_reduction = RDom(0, (m.key_length + lanes - 1) / lanes, "weights_rj");
    m.weights_lane_reduction = RDom(0, lanes, "weights_rl");
    const Var lane = m.lane;
    const Expr score_j = m.scores(m.weights_row_reduction * lanes + lane, i, h, b);
    m.row_max_lanes = Func("row_max_lanes");
    m.row_max_lanes(lane, i, h, b) = masked_score_limit;
    m.row_max_lanes(lane, i, h, b) = max(m.row_max_lanes(lane, i, h, b), score_j);
    m.row_max = Func("row_max");
    m.row_max(i, h, b) = masked_score_limit;
    m.row_max(i, h, b) = max(m.row_max(i, h, b), m.row_max_lanes(m.weights_lane_reduction, i, h, b));
    m.row_sum_lanes = Func("row_sum_lanes");
    m.row_sum_lanes(lane, i, h, b) = 0.0f;
    m.row_sum_lanes(lane, i, h, b) += select(score_j <= masked_score_limit, 0.0f, exp(score_j - m.row_max(i, h, b)));
    m.row_sum = Func("row_sum");
    m.row_sum(i, h, b) = 0.0f;
    m.row_sum(i, h, b) += m.row_sum_lanes(m.weights_lane_reduction, i, h, b);
    const Expr score = m.scores(kernel_key, i, h, b);
    Expr weight = select(score <= masked_score_limit, 0.0f, exp(score - m.row_max(i, h, b)) / m.row_sum(i, h, b));
    if (src.value_weight_factor.defined()) weight *= src.value_weight_factor(kernel_key, i, h, b);
    m.head_weights = Func("head_weights");
    m.head_weights(column, i, h, b) = weight;
    m.weights = Func("weights");
    if (desc.weights == weights_output::per_head) {
      m.weights(column, i, h, b) = as_element(m, m.head_weights(column, i, h, b));
    } else {
      m.head_reduction = RDom(0, desc.num_heads, "weights_rh");
      m.summed_weights = Func("summed_weights");
      m.summed_weights(column, i, b) = 0.0f;
      m.summed_weights(column, i, b) += m.head_weights(column, i, m.head_reduction, b);
      m.weights(column, i, b) = as_element(m, m.summed_weights(column, i, b) / float(desc.num_heads));
    }
  }
  return m;
}

}  // namespace attngen::codegen
