#include "attngen/codegen/module_algorithm.hpp"

#include <cmath>
#include <stdexcept>
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

// The pipeline's parameter for the input `slot` of the part's argument list (attngen/module_arguments.hpp):
// its name, element type and rank from there; undefined when the part does not take it.
ImageParam input_of(const module_algorithm& m, module_slot slot) {
  for (const module_argument& a : part_arguments(m.desc, m.part))
    if (a.slot == slot && a.taken) {
      const Type type = m.bfloat16_as_bits && a.type == dtype::bf16 ? UInt(16) : halide_type_of(a.type);
      return ImageParam(type, a.rank, std::string(parameter_name(a)));
    }
  return ImageParam();
}

// Element (feature, position, batch) of a (B, L, F) or (L, B, F) input, as float.
Expr sequence_at(const module_algorithm& m, const ImageParam& t, Expr feature, Expr position, Expr batch) {
  return as_float(m, m.desc.batch_major ? t(feature, position, batch) : t(feature, batch, position));
}

// `x` is (c, i, b), or with `groups` > 1 (c within group, group, i, b) as the attention's output is.
// Reads of rows, outputs and weights are clamped into range, so the schedule may compute whole tiles
// past the ends (their results are never read).
// `weight` is (c, n) float, PyTorch's (out, in) layout; `bias` (n) float, or undefined. With
// `panel_outputs`, the product reads W in panels of that many outputs (linear_funcs::weight_panels).
linear_funcs define_linear(const std::string& name, const Func& x, int groups, Expr rows, const Func& weight,
                           const Func& bias, Expr inputs, Expr outputs, const module_algorithm& m,
                           int panel_outputs = 0) {
  const Var n = m.n, c = m.c, i = m.i, b = m.b;
  const Expr per_group = inputs / groups;
  linear_funcs f;
  f.weight = weight;
  f.reduction = RDom(0, per_group, 0, groups, name + "_r");
  const Expr row = clamp(i, 0, rows - 1);
  const Expr input = groups == 1 ? x(f.reduction.x, row, b) : x(f.reduction.x, f.reduction.y, row, b);
  f.product = Func(name + "_product");
  f.product(n, i, b) = 0.0f;
  const Expr feature = f.reduction.y * per_group + f.reduction.x;
  Expr weight_at;
  if (panel_outputs > 0) {
    const Var within("within"), panel("panel");
    f.weight_panels = Func(name + "_weight_panels");
    f.weight_panels(within, c, panel) = weight(c, min(panel * panel_outputs + within, outputs - 1));
    weight_at = f.weight_panels(n % panel_outputs, feature, n / panel_outputs);
  } else {
    f.weight_transposed = Func(name + "_weight_t");
    f.weight_transposed(n, c) = weight(c, min(n, outputs - 1));
    weight_at = f.weight_transposed(n, feature);
  }
  f.product(n, i, b) += input * weight_at;
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

// Keys or values by head (d, g, j, b) from a projection's features (n, i, b): kernel key j < extra is
// an appended key, bias_k / bias_v first (when present), then zeros.
Func with_appended_keys(const module_algorithm& m, const std::string& name, const Func& projection,
                        const ImageParam& bias) {
  const int head_dim = m.desc.head_dim(), extra = m.desc.extra_keys();
  Var d("d"), g("g");
  const Var j = m.j, b = m.b;
  Func f(name);
  const Expr projected = projection(g * head_dim + d, max(j - extra, 0), b);
  if (extra == 0) {
    f(d, g, j, b) = projected;
    return f;
  }
  const Expr appended = bias.defined() ? select(j == 0, as_float(m, bias(g * head_dim + d)), 0.0f) : Expr(0.0f);
  f(d, g, j, b) = select(j < extra, appended, projected);
  return f;
}

// The attention's sources: projected queries, keys and values, the masks on input keys (appended keys
// are never masked), and dropout.
attention_sources module_sources(module_algorithm& m) {
  const mha_desc& desc = m.desc;
  const int head_dim = desc.head_dim();
  const int extra = desc.extra_keys();
  Var d("d"), j = m.j, i = m.i, h = m.h, b = m.b;
  attention_sources src;
  src.q(d, h, i, b) = m.projected_q(h * head_dim + d, i, b);

  src.k = m.keys;
  src.v = m.values;
  src.query_length = m.query_length;
  src.key_length = m.key_length;
  // A zero Halide cannot prove: whole (and in the backward), the output projection's weight is E x E
  // (present in every module, self-attention included); in parts, keys and queries have one batch
  // (both checked by the runtime).
  src.unproven_zero = m.part == module_part::whole || m.part == module_part::backward
                          ? min(m.out_weight.dim(0).extent() - m.out_weight.dim(1).extent(), 0)
                          : min(m.keys_input.dim(3).extent() - m.projected_q_input.dim(2).extent(), 0);
  src.causal_offset = desc.causal_mode == causal_alignment::bottom_right ? m.key_length - m.query_length : Expr(extra);
  src.causally_free_keys = extra;

  // Or-ed with the unproven zero: a test loop partitioning can solve for the key block made it copy the
  // block body for the first block, in every variant.
  const Expr is_input_key = (j | src.unproven_zero) >= extra;
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

// The module's input tensors (whole): sequences, projection weights and biases, bias_k and bias_v,
// out_weight and out_bias, masks; its lengths.
void define_module_inputs(module_algorithm& m) {
  const mha_desc& desc = m.desc;
  m.query = input_of(m, module_slot::query);
  m.key = input_of(m, module_slot::key);
  m.value = input_of(m, module_slot::value);
  m.q_weight = input_of(m, module_slot::q_weight);
  m.k_weight = input_of(m, module_slot::k_weight);
  m.v_weight = input_of(m, module_slot::v_weight);
  m.q_bias = input_of(m, module_slot::q_bias);
  m.k_bias = input_of(m, module_slot::k_bias);
  m.v_bias = input_of(m, module_slot::v_bias);
  m.bias_k = input_of(m, module_slot::bias_k);
  m.bias_v = input_of(m, module_slot::bias_v);
  m.out_weight = input_of(m, module_slot::out_weight);
  m.out_bias = input_of(m, module_slot::out_bias);
  const int sequence_dim = desc.batch_major ? 1 : 2;
  m.query_length = m.query.dim(sequence_dim).extent();
  m.input_key_length = desc.self_attn ? m.query_length : m.key.dim(sequence_dim).extent();
  m.key_length = m.input_key_length + desc.extra_keys();
}

// The attention's masks (whole, attention, weights): key_padding_mask and attn_mask.
void define_mask_inputs(module_algorithm& m) {
  m.key_padding = input_of(m, module_slot::key_padding_mask);
  m.mask = input_of(m, module_slot::attn_mask);
}

// A weight or bias as a float Func (an undefined Func for an absent bias).
Func float_vector(const module_algorithm& m, const ImageParam& p) {
  Func f;
  if (p.defined()) {
    f = Func(p.name() + "_float");
    f(m.n) = as_float(m, p(m.n));
  }
  return f;
}

Func float_matrix(const module_algorithm& m, const ImageParam& p) {
  Func f(p.name() + "_float");
  f(m.c, m.n) = as_float(m, p(m.c, m.n));
  return f;
}

// The input projections, from the module's inputs to projected_q/k/v, keys and values.
void define_in_projection(module_algorithm& m) {
  const mha_desc& desc = m.desc;
  const int embed = desc.embed, kv_embed = desc.kv_embed();
  const Var c = m.c, n = m.n, i = m.i, b = m.b;
  Func& query_in = m.query_in;
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
    Func &key_in = m.key_in, &value_in = m.value_in;
    key_in(c, i, b) = sequence_at(m, m.key, c, i, b);
    value_in(c, i, b) = sequence_at(m, m.value, c, i, b);
    m.q_projection = define_linear("q_projection", query_in, 1, m.query_length, float_matrix(m, m.q_weight),
                                   float_vector(m, m.q_bias), embed, embed, m);
    m.k_projection = define_linear("k_projection", key_in, 1, m.input_key_length, float_matrix(m, m.k_weight),
                                   float_vector(m, m.k_bias), desc.effective_kdim(), kv_embed, m);
    m.v_projection = define_linear("v_projection", value_in, 1, m.input_key_length, float_matrix(m, m.v_weight),
                                   float_vector(m, m.v_bias), desc.effective_vdim(), kv_embed, m);
    m.projected_q(n, i, b) = m.q_projection.result(n, i, b);
    m.projected_k(n, i, b) = m.k_projection.result(n, i, b);
    m.projected_v(n, i, b) = m.v_projection.result(n, i, b);
  }
  m.keys = with_appended_keys(m, "keys", m.projected_k, m.bias_k);
  m.values = with_appended_keys(m, "values", m.projected_v, m.bias_v);
}

// A projection part: one linear layer over x (c, i, b) of `input` elements to (n, i, b) of `output`
// elements, its extents the weight's, W in panels of one register tile's outputs for `lanes` lanes.
void define_linear_part(module_algorithm& m, Type output, int lanes) {
  const Var c = m.c, n = m.n, i = m.i, b = m.b;
  m.linear_input = input_of(m, module_slot::x);
  m.linear_weight = input_of(m, module_slot::weight);
  m.linear_bias = input_of(m, module_slot::bias);
  Func x("x_float");
  x(c, i, b) = cast<float>(m.linear_input(c, i, b));
  const Expr rows = m.linear_input.dim(1).extent();
  m.linear = define_linear("linear", x, 1, rows, float_matrix(m, m.linear_weight),
                           float_vector(m, m.linear_bias), m.linear_weight.dim(0).extent(),
                           m.linear_weight.dim(1).extent(), m, linear_tile_outputs(lanes));
  m.output = Func("output");
  m.output(n, i, b) = cast(output, m.linear.result(n, i, b));
  // The runtime's views start at 0 (halide_view.cpp). Stated, the output's tiles start at multiples
  // of W's panels: otherwise every step of the product tests at run time whether a tile spans two.
  m.output.output_buffer().dim(0).set_min(0);
}

// The attention and weights parts read the projection part's buffers.
void define_projected_inputs(module_algorithm& m) {
  m.projected_q_input = input_of(m, module_slot::projected_q);
  m.keys_input = input_of(m, module_slot::keys);
  m.values_input = input_of(m, module_slot::values);
  m.projected_q = Func("projected_q");
  m.projected_q(m.n, m.i, m.b) = m.projected_q_input(m.n, m.i, m.b);
  Var d("d"), g("g");
  m.keys = Func("keys");
  m.keys(d, g, m.j, m.b) = m.keys_input(d, g, m.j, m.b);
  m.values = Func("values");
  if (m.values_input.defined()) {
    m.values(d, g, m.j, m.b) = m.values_input(d, g, m.j, m.b);
  } else {
    // The weights part defines the attention for its scores only: its result, which reads the
    // values, is never computed there, so the part takes no values.
    m.values(d, g, m.j, m.b) = 0.0f;
  }
  m.query_length = m.projected_q_input.dim(1).extent();
  m.key_length = m.keys_input.dim(2).extent();
  m.input_key_length = m.key_length - m.desc.extra_keys();
}

// The output projection of the attention's result (e, h, i, b), and the output in the module's layout.
void define_out_projection(module_algorithm& m, const Func& attention_result) {
  const mha_desc& desc = m.desc;
  const Var n = m.n, i = m.i, b = m.b;
  // The attention's output (e, h, i, b) is the output projection's input, head by head.
  m.out_projection = define_linear("out_projection", attention_result, desc.num_heads, m.query_length,
                                   float_matrix(m, m.out_weight), float_vector(m, m.out_bias), desc.embed, desc.embed, m);
  m.output = Func("output");
  if (desc.batch_major)
    m.output(n, i, b) = as_element(m, m.out_projection.result(n, i, b));
  else
    m.output(n, b, i) = as_element(m, m.out_projection.result(n, i, b));
}

// The weights output: every score of a row, softmax-normalised by the row itself.
void define_weights(module_algorithm& m, const blocking& tiles) {
  const mha_desc& desc = m.desc;
  const Var i = m.i, j = m.j, h = m.h, b = m.b;
  const attention_sources& src = m.attention.sources;
  const int head_dim = desc.head_dim();
  const int group = desc.num_heads / desc.effective_kv_heads();
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  m.score_reduction = RDom(0, head_dim, "weights_rd");
  Var d("d"), g("g");
  m.keys_by_feature = Func("keys_by_feature");
  // Rows of scores cover whole vectors of keys: those past the end read the last key (and score as
  // masked).
  m.keys_by_feature(j, d, g, b) = src.k(d, g, clamp(j, 0, m.key_length - 1), b);
  m.score_dot = Func("score_dot");
  m.score_dot(j, i, h, b) = 0.0f;
  // Rows past the last are read clamped (the schedule computes whole tiles of rows).
  const Expr row = clamp(i, 0, m.query_length - 1);
  m.score_dot(j, i, h, b) += src.q(m.score_reduction, h, row, b) * m.keys_by_feature(j, m.score_reduction, h / group, b);
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
  m.exponentials = Func("exponentials");
  m.exponentials(j, i, h, b) =
      select(m.scores(j, i, h, b) <= masked_score_limit, 0.0f, exp(m.scores(j, i, h, b) - m.row_max(i, h, b)));
  m.row_sum_lanes = Func("row_sum_lanes");
  m.row_sum_lanes(lane, i, h, b) = 0.0f;
  m.row_sum_lanes(lane, i, h, b) += m.exponentials(m.weights_row_reduction * lanes + lane, i, h, b);
  m.row_sum = Func("row_sum");
  m.row_sum(i, h, b) = 0.0f;
  m.row_sum(i, h, b) += m.row_sum_lanes(m.weights_lane_reduction, i, h, b);
  const Expr score = m.scores(kernel_key, i, h, b);
  Expr weight = select(score <= masked_score_limit, 0.0f, m.exponentials(kernel_key, i, h, b) / m.row_sum(i, h, b));
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

}  // namespace

Expr as_float(const module_algorithm& m, Expr element) {
  return m.bfloat16_as_bits ? float_of_bfloat16_bits(element) : cast<float>(element);
}

Expr as_element(const module_algorithm& m, Expr value) {
  return m.bfloat16_as_bits ? bfloat16_bits_of(value) : cast(halide_type_of(m.desc.element_type), value);
}

Expr dropout_bits(Expr seed, Expr batch, Expr head, Expr query, Expr column, int heads) {
  const Expr seed_low = cast<uint32_t>(seed);
  const Expr seed_high = cast<uint32_t>(seed >> 32);
  const Expr row = mix_bits(seed_low ^ mix_bits(seed_high ^ mix_bits(cast<uint32_t>(batch) * heads +
                                                                      cast<uint32_t>(head))));
  return mix_bits(mix_bits(row ^ cast<uint32_t>(query)) ^ mix_bits(cast<uint32_t>(column)));
}

Argument module_algorithm::parameter(const module_argument& argument) const {
  switch (argument.slot) {
    case module_slot::query: return query;
    case module_slot::key: return key;
    case module_slot::value: return value;
    case module_slot::q_weight: return q_weight;
    case module_slot::k_weight: return k_weight;
    case module_slot::v_weight: return v_weight;
    case module_slot::q_bias: return q_bias;
    case module_slot::k_bias: return k_bias;
    case module_slot::v_bias: return v_bias;
    case module_slot::bias_k: return bias_k;
    case module_slot::bias_v: return bias_v;
    case module_slot::out_weight: return out_weight;
    case module_slot::out_bias: return out_bias;
    case module_slot::key_padding_mask: return key_padding;
    case module_slot::attn_mask: return mask;
    case module_slot::x: return linear_input;
    case module_slot::weight: return linear_weight;
    case module_slot::bias: return linear_bias;
    case module_slot::projected_q: return projected_q_input;
    case module_slot::keys: return keys_input;
    case module_slot::values: return values_input;
    case module_slot::d_output: return d_output;
    case module_slot::output: case module_slot::attn_weights: case module_slot::linear_output:
    case module_slot::attention_result: break;
    default: break;  // the backward's gradients
  }
  throw std::logic_error("attngen: " + std::string(argument.name) + " is an output, not a pipeline parameter");
}

std::vector<Argument> module_algorithm::arguments() const {
  std::vector<Argument> args;
  for (const module_argument& argument : part_arguments(desc, part))
    if (!argument.is_output()) args.push_back(parameter(argument));
  if (takes_dropout_scalars(desc, part)) args.insert(args.end(), {training, seed});
  return args;
}

std::vector<Func> module_algorithm::outputs() const {
  switch (part) {
    case module_part::whole: break;
    case module_part::projection: case module_part::out_projection: return {output};
    case module_part::attention: return {attention.output};
    case module_part::weights: return {weights};
    case module_part::backward: throw std::logic_error("attngen: a module's backward outputs are module_backward_algorithm's");
  }
  std::vector<Func> funcs = {output};
  if (desc.weights != weights_output::none) funcs.push_back(weights);
  return funcs;
}

module_algorithm define_module(const mha_desc& desc, const blocking& tiles, bool bfloat16_as_bits, module_part part) {
  module_algorithm m;
  m.desc = desc;
  m.part = part;
  m.bfloat16_as_bits = bfloat16_as_bits && desc.element_type == dtype::bf16;
  const Type element = m.bfloat16_as_bits ? UInt(16) : halide_type_of(desc.element_type);
  const bool whole = part == module_part::whole;

  if (part == module_part::projection) {
    define_linear_part(m, Float(32), tiles.lanes);
    return m;
  }
  if (part == module_part::out_projection) {
    define_linear_part(m, element, tiles.lanes);
    return m;
  }
  if (whole || part == module_part::backward) {
    define_module_inputs(m);
    define_in_projection(m);
  } else {
    define_projected_inputs(m);
  }
  define_mask_inputs(m);
  // The attention's result stays float32 on its way to the output projection. The weights output
  // normalises its own rows (it computes every score of a row anyway).
  const attention_desc op = desc.attention_operator().element(dtype::f32);
  m.attention = define_attention(op, tiles, module_sources(m));
  if (whole) define_out_projection(m, m.attention.output);
  if (desc.weights != weights_output::none && (whole || part == module_part::weights)) define_weights(m, tiles);
  if (part == module_part::backward) m.d_output = input_of(m, module_slot::d_output);
  return m;
}

const char* name_of(module_part part) {
  switch (part) {
    case module_part::whole: return "whole";
    case module_part::projection: return "projection";
    case module_part::attention: return "attention";
    case module_part::out_projection: return "out_projection";
    case module_part::weights: return "weights";
    case module_part::backward: return "backward";
  }
  return "";
}

}  // namespace attngen::codegen
