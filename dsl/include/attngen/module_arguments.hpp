#pragma once
/// The run-time arguments of a module kernel (attngen::mha_desc), derived from its description: one
/// list read by the Halide pipeline (its parameters), the generated wrapper (its calls), the runtime
/// (validation and buffer attachment) and the tests, as attngen/arguments.hpp is for the operator.
/// Also the arguments of each part a module's CPU code runs in (module_part), which the runtime
/// calls over buffers it allocates.

#include <cstdint>
#include <iterator>
#include <string_view>

#include "attngen/arguments.hpp"
#include "attngen/module.hpp"

namespace attngen {

/// The members of attngen::mha_args (the weights' through mha_args::weights), then the buffers
/// between the CPU parts.
enum class module_slot : std::uint8_t {
  query, key, value,
  q_weight, k_weight, v_weight, q_bias, k_bias, v_bias, bias_k, bias_v, out_weight, out_bias,
  key_padding_mask, attn_mask,
  output, attn_weights,
  // Between the parts: a linear layer's input, weight, bias and result; the projected queries, keys
  // and values; the attention's result.
  x, weight, bias, linear_output, projected_q, keys, values, attention_result,
  // The backward pass (attngen::mha_backward_args): the loss's gradient of the output, then the
  // gradients of the inputs and of the weights, in mha_args' order.
  d_output, d_query, d_key, d_value,
  d_q_weight, d_k_weight, d_v_weight, d_q_bias, d_k_bias, d_v_bias, d_bias_k, d_bias_v, d_out_weight, d_out_bias,
};

/// An argument of a module's call or of one of its parts.
using module_argument = argument<module_slot>;

/// Every slot of a module call (mha_args), taken or not.
inline constexpr int module_slot_count = int(module_slot::attn_weights) + 1;
/// Room for the arguments of any module pipeline: a call's, a part's, the backward's.
inline constexpr int module_argument_capacity = int(module_slot::d_out_bias) + 1;
using module_argument_table = argument_list<module_slot, module_argument_capacity>;

/// Which pipeline of a module a generated function is. CPU code comes in parts that the runtime
/// runs one after the other over float32 buffers it allocates, so every kernel variant shares one
/// compiled copy of the projections and the weights; GPU code is the whole module.
enum class module_part : std::uint8_t {
  whole,           ///< inputs to outputs in one pipeline
  projection,      ///< one linear layer, x of the element type to a float32 result: the runtime runs it
                   ///< for the queries, the keys and the values, and with f32 elements for the output
  attention,       ///< projected queries, keys and values (and masks) to the attention's result
  out_projection,  ///< one linear layer, float32 x to the element type: the output of f16 and bf16 modules
  weights,         ///< projected queries and keys (and masks) to the weights output (need_weights)
  backward,        ///< inputs, weights, masks and the output's gradient to the gradients of the inputs and
                   ///< weights, in one pipeline (with_backward; module_backward_arguments)
};

/// The name of the pipeline's parameter for `a`: its name's last component ("q_weight" for
/// "weights.q_weight").
template <typename Slot>
constexpr std::string_view parameter_name(const argument<Slot>& a) {
  const std::size_t dot = a.name.rfind('.');
  return dot == std::string_view::npos ? a.name : a.name.substr(dot + 1);
}

/// Whether `a` is one of the module's learned parameters, which calls pass together as one
/// mha_weights (mha_args::weights, the typed call's `weights`).
constexpr bool is_weight(const module_argument& a) {
  return a.slot >= module_slot::q_weight && a.slot <= module_slot::out_bias;
}

namespace detail {

/// A dimension fixed by the description.
constexpr argument_dim fixed_dim(std::string_view symbol, std::string_view label, int extent, bool is_count = false) {
  return {symbol, label, extent_source::description, extent, is_count};
}

/// The dims of a (B, L, F) sequence, or (L, B, F) without batch_first.
constexpr void set_sequence_dims(module_argument& a, bool batch_first, argument_dim length, argument_dim features) {
  a.dims[0] = batch_first ? batch_dim : length;
  a.dims[1] = batch_first ? length : batch_dim;
  a.dims[2] = features;
  a.rank = 3;
}

/// The element type of a mask of `kind`: bytes when boolean.
constexpr dtype mask_type(mask_kind kind, dtype element) { return kind == mask_kind::boolean ? dtype::u8 : element; }

/// The attn_mask's slot. S is the input keys (appended ones are never masked).
constexpr module_argument attn_mask_argument(const mha_desc& d, argument_dim keys) {
  module_argument a = make_argument(module_slot::attn_mask, "attn_mask", argument_role::input,
                                    mask_type(d.mask, d.element_type), {}, d.mask != mask_kind::none, "attn_mask");
  const argument_dim queries{"L", "L", extent_source::query_length};
  switch (d.mask_dims) {
    case attn_mask_shape::l_s: a.dims[0] = queries; a.dims[1] = keys; a.rank = 2; break;
    case attn_mask_shape::bh_l_s:
      a.dims[0] = {"B x heads", "batch x heads", extent_source::batch, 0, false, d.num_heads};
      a.dims[1] = queries;
      a.dims[2] = keys;
      a.rank = 3;
      break;
    case attn_mask_shape::b_h_l_s:
      a.dims[0] = batch_dim;
      a.dims[1] = heads_dim(d.num_heads);
      a.dims[2] = queries;
      a.dims[3] = keys;
      a.rank = 4;
      break;
    case attn_mask_shape::none: break;
  }
  return a;
}

constexpr module_argument key_padding_argument(const mha_desc& d, argument_dim keys) {
  return make_argument(module_slot::key_padding_mask, "key_padding_mask", argument_role::input,
                       mask_type(d.key_padding, d.element_type), {batch_dim, keys}, d.key_padding != mask_kind::none,
                       "key_padding_mask");
}

/// The weights output's slot: a column per key, the appended ones after the S input keys.
constexpr module_argument attn_weights_argument(const mha_desc& d, argument_dim keys) {
  module_argument a = make_argument(module_slot::attn_weights, "attn_weights", argument_role::output, d.element_type,
                                    {}, d.weights != weights_output::none, "need_weights");
  const argument_dim queries{"L", "L", extent_source::query_length};
  const argument_dim columns{"S'", "S' (keys with appended ones)", keys.source, 0, false, 1, d.extra_keys()};
  if (d.weights == weights_output::per_head) {
    a.dims[0] = batch_dim;
    a.dims[1] = heads_dim(d.num_heads);
    a.dims[2] = queries;
    a.dims[3] = columns;
    a.rank = 4;
  } else if (d.weights == weights_output::averaged) {
    a.dims[0] = batch_dim;
    a.dims[1] = queries;
    a.dims[2] = columns;
    a.rank = 3;
  }
  return a;
}

}  // namespace detail

/// Every slot of a call of `d`'s module kernel, in the generated function's order: query, [key,
/// value], the projection weights, [their biases], [bias_k, bias_v], out_weight, [out_bias],
/// [key_padding_mask], [attn_mask], then the outputs output, [attn_weights]. Batch and lengths come
/// from the query (B, L) and the key (S; the query's L with self-attention).
constexpr module_argument_table argument_table(const mha_desc& d) {
  using detail::batch_dim, detail::fixed_dim, detail::make_argument;
  const argument_dim L{"L", "L", extent_source::query_length};
  const argument_dim S = d.self_attn ? argument_dim{"S", "S", extent_source::query_length}
                                     : argument_dim{"S", "S", extent_source::key_length};
  const argument_dim E = fixed_dim("E", "embed_dim", d.embed);
  const bool bias = d.projection_bias, bias_kv = d.bias_kv, inputs_kv = !d.self_attn;
  const dtype element = d.element_type;
  const auto input = argument_role::input;
  auto sequence = [&](module_slot slot, std::string_view name, argument_dim length, argument_dim features,
                      argument_role role, bool taken, std::string_view feature) {
    module_argument a = make_argument(slot, name, role, element, {}, taken, feature);
    detail::set_sequence_dims(a, d.batch_major, length, features);
    return a;
  };
  auto matrix = [&](module_slot slot, std::string_view name, argument_dim out, argument_dim in) {
    return make_argument(slot, name, input, element, {out, in});
  };
  auto vector = [&](module_slot slot, std::string_view name, argument_dim features, bool taken,
                    std::string_view feature) { return make_argument(slot, name, input, element, {features}, taken, feature); };
  const argument_dim out_E = fixed_dim("E", "out features (embed_dim)", d.embed);
  const argument_dim in_E = fixed_dim("E", "in features (embed_dim)", d.embed);
  const argument_dim out_KVE = fixed_dim("KVE", "out features (kv_heads x head_dim)", d.kv_embed());
  const argument_dim KVE = fixed_dim("KVE", "kv_heads x head_dim", d.kv_embed());

  module_argument_table t;
  t.push_back(sequence(module_slot::query, "query", L, E, input, true, {}));
  t.push_back(sequence(module_slot::key, "key", S, fixed_dim("kdim", "kdim", d.effective_kdim()), input, inputs_kv,
                       "separate key and value inputs (not self_attention)"));
  t.push_back(sequence(module_slot::value, "value", S, fixed_dim("vdim", "vdim", d.effective_vdim()), input, inputs_kv,
                       "separate key and value inputs (not self_attention)"));
  t.push_back(matrix(module_slot::q_weight, "weights.q_weight", out_E, in_E));
  t.push_back(matrix(module_slot::k_weight, "weights.k_weight", out_KVE,
                     fixed_dim("kdim", "in features (kdim)", d.effective_kdim())));
  t.push_back(matrix(module_slot::v_weight, "weights.v_weight", out_KVE,
                     fixed_dim("vdim", "in features (vdim)", d.effective_vdim())));
  t.push_back(vector(module_slot::q_bias, "weights.q_bias", E, bias, "projection bias"));
  t.push_back(vector(module_slot::k_bias, "weights.k_bias", KVE, bias, "projection bias"));
  t.push_back(vector(module_slot::v_bias, "weights.v_bias", KVE, bias, "projection bias"));
  t.push_back(vector(module_slot::bias_k, "weights.bias_k", KVE, bias_kv, "add_bias_kv"));
  t.push_back(vector(module_slot::bias_v, "weights.bias_v", KVE, bias_kv, "add_bias_kv"));
  t.push_back(matrix(module_slot::out_weight, "weights.out_weight", out_E, in_E));
  t.push_back(vector(module_slot::out_bias, "weights.out_bias", E, bias, "projection bias"));
  t.push_back(detail::key_padding_argument(d, S));
  t.push_back(detail::attn_mask_argument(d, S));
  t.push_back(sequence(module_slot::output, "output", L, E, argument_role::output, true, {}));
  t.push_back(detail::attn_weights_argument(d, S));
  return t;
}

/// The arguments `d`'s module kernel takes (its GPU function, module_part::whole), in order.
constexpr module_argument_table kernel_arguments(const mha_desc& d) { return argument_table(d).taken(); }

/// Whether `a` is the gradient of one of the module's learned parameters, which a backward call
/// writes together as one mha_weights (mha_backward_args::d_weights).
constexpr bool is_weight_gradient(const module_argument& a) {
  return a.slot >= module_slot::d_q_weight && a.slot <= module_slot::d_out_bias;
}

/// Every slot of a call of `d`'s backward pass (.with_backward()), in the generated function's order:
/// the forward's inputs as it takes them (query, [key, value], the weights, [key_padding_mask],
/// [attn_mask]), then the loss's gradient of the output d_output, of the output's shape and type,
/// then the gradients d_query, [d_key, d_value] and d_weights.<weight> of each input and weight, of
/// its shape and type. With self_attention, query is key is value: d_query is their one gradient.
constexpr module_argument_table module_backward_argument_table(const mha_desc& d) {
  const module_argument_table forward = argument_table(d);
  module_argument_table t;
  for (const module_argument& a : forward)
    if (!a.is_output()) t.push_back(a);
  for (const module_argument& a : forward)
    if (a.slot == module_slot::output) {
      module_argument d_output = a;
      d_output.slot = module_slot::d_output;
      d_output.name = "d_output";
      d_output.role = argument_role::input;
      t.push_back(d_output);
    }
  constexpr std::string_view gradient_names[] = {
      "d_query", "d_key", "d_value", "d_weights.q_weight", "d_weights.k_weight", "d_weights.v_weight",
      "d_weights.q_bias", "d_weights.k_bias", "d_weights.v_bias", "d_weights.bias_k", "d_weights.bias_v",
      "d_weights.out_weight", "d_weights.out_bias"};
  static_assert(std::size(gradient_names) == int(module_slot::d_out_bias) - int(module_slot::d_query) + 1);
  for (const module_argument& a : forward)
    if (a.slot <= module_slot::out_bias) {
      module_argument gradient = a;
      const int n = int(a.slot) - int(module_slot::query);
      gradient.slot = module_slot(int(module_slot::d_query) + n);
      gradient.name = gradient_names[n];
      gradient.role = argument_role::gradient;
      t.push_back(gradient);
    }
  return t;
}

/// The arguments `d`'s backward pass takes, in order (module_backward_argument_table's taken slots).
constexpr module_argument_table module_backward_arguments(const mha_desc& d) {
  return module_backward_argument_table(d).taken();
}

/// The CPU parts `d`'s module runs in, in the order the runtime runs them: projection (queries, keys,
/// values, and the output of f32 modules), attention, out_projection (f16 and bf16 modules), weights
/// (need_weights).
struct module_part_list {
  module_part items[4] = {};
  int count = 0;
  constexpr const module_part* begin() const { return items; }
  constexpr const module_part* end() const { return items + count; }
};

constexpr module_part_list cpu_module_parts(const mha_desc& d) {
  module_part_list parts;
  parts.items[parts.count++] = module_part::projection;
  parts.items[parts.count++] = module_part::attention;
  if (d.element_type != dtype::f32) parts.items[parts.count++] = module_part::out_projection;
  if (d.weights != weights_output::none) parts.items[parts.count++] = module_part::weights;
  return parts;
}

/// Whether `part`'s function takes the scalars training and seed, after its inputs: with dropout, the
/// parts that weigh the values or output the weights (whole, attention, weights).
constexpr bool takes_dropout_scalars(const mha_desc& d, module_part part) {
  return d.has_dropout() && (part == module_part::whole || part == module_part::attention ||
                             part == module_part::weights || part == module_part::backward);
}

/// The arguments of `part`'s function, in order (inputs, then outputs; the dropout scalars go
/// between them, see takes_dropout_scalars). Buffers between parts are dense float32: projected
/// queries (B, L, E), keys and values (B, S', KVH, hd) with the appended keys first, the attention's
/// result (B, L, heads, hd). A linear layer's x is (B, rows, in), its result (B, rows, out).
constexpr module_argument_table part_arguments(const mha_desc& d, module_part part) {
  using detail::batch_dim, detail::fixed_dim, detail::make_argument;
  const auto input = argument_role::input, output = argument_role::output;
  const argument_dim L{"L", "L", extent_source::query_length};
  const argument_dim S{"S", "S", extent_source::key_length};
  const argument_dim keys{"S'", "S' (keys with appended ones)", extent_source::key_length, 0, false, 1, d.extra_keys()};
  const argument_dim rows{"rows", "rows", extent_source::query_length};
  const argument_dim E = fixed_dim("E", "embed_dim", d.embed), hd = fixed_dim("hd", "head_dim", d.head_dim());
  const argument_dim in{"in", "in features", extent_source::description}, out{"out", "out features", extent_source::description};
  const argument_dim KVH = fixed_dim("KVH", "kv heads", d.effective_kv_heads(), true);
  const dtype element = d.element_type, f32 = dtype::f32;
  module_argument_table t;
  switch (part) {
    case module_part::whole: return kernel_arguments(d);
    case module_part::backward: return module_backward_arguments(d);
    case module_part::projection:
    case module_part::out_projection: {
      const bool from_float = part == module_part::out_projection;
      t.push_back(make_argument(module_slot::x, "x", input, from_float ? f32 : element, {batch_dim, rows, in}));
      t.push_back(make_argument(module_slot::weight, "weight", input, element, {out, in}));
      if (d.projection_bias) t.push_back(make_argument(module_slot::bias, "bias", input, element, {out}));
      t.push_back(make_argument(module_slot::linear_output, "output", output, from_float ? element : f32,
                                {batch_dim, rows, out}));
      return t;
    }
    case module_part::attention:
    case module_part::weights: {
      const bool attention = part == module_part::attention;
      t.push_back(make_argument(module_slot::projected_q, "projected_q", input, f32, {batch_dim, L, E}));
      t.push_back(make_argument(module_slot::keys, "keys", input, f32, {batch_dim, keys, KVH, hd}));
      if (attention) t.push_back(make_argument(module_slot::values, "values", input, f32, {batch_dim, keys, KVH, hd}));
      if (d.key_padding != mask_kind::none) t.push_back(detail::key_padding_argument(d, S));
      if (d.mask != mask_kind::none) t.push_back(detail::attn_mask_argument(d, S));
      if (attention)
        t.push_back(make_argument(module_slot::attention_result, "attention_result", output, f32,
                                  {batch_dim, L, detail::heads_dim(d.num_heads), hd}));
      else
        t.push_back(detail::attn_weights_argument(d, S));
      return t;
    }
  }
  return t;
}

}  // namespace attngen
