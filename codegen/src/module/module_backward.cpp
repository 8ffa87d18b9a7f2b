#include "attngen/codegen/module_backward.hpp"

#include <stdexcept>
#include <string>

namespace attngen::codegen {

using namespace Halide;

namespace {

// The gradients of the linear layer y = x W^T + bias over `rows` rows of `batch` sequences, with dy
// its output's gradient. x (c, i, b), dy (n, i, b) and W (c, n) are float.
linear_gradients define_linear_gradients(const std::string& name, const Func& x, const Func& dy, const Func& weight,
                                         int outputs, Expr rows, Expr batch, const module_algorithm& m) {
  const Var c = m.c, n = m.n, i = m.i, b = m.b;
  linear_gradients g{Func(name + "_input_gradient"), Func(name + "_weight_gradient"), Func(name + "_bias_gradient"),
                     RDom(0, outputs, name + "_rn"), RDom(0, rows, 0, batch, name + "_rr")};
  g.input(c, i, b) = 0.0f;
  g.input(c, i, b) += dy(g.outputs, i, b) * weight(c, g.outputs);
  g.weight(c, n) = 0.0f;
  g.weight(c, n) += dy(n, g.rows.x, g.rows.y) * x(c, g.rows.x, g.rows.y);
  g.bias(n) = 0.0f;
  g.bias(n) += dy(n, g.rows.x, g.rows.y);
  return g;
}

// A weight of the module as a float Func (c, n).
Func float_weight(const module_algorithm& m, const ImageParam& weight) {
  Func f(weight.name() + "_as_float");
  f(m.c, m.n) = as_float(m, weight(m.c, m.n));
  return f;
}

}  // namespace

module_backward_algorithm define_module_backward(const mha_desc& desc, const blocking& tiles,
                                                 const backward_blocking& backward_tiles, bool bfloat16_as_bits) {
  if (!desc.backward) throw std::invalid_argument("module backward: the description has no .with_backward()");
  module_backward_algorithm a{define_module(desc, tiles, bfloat16_as_bits, module_part::backward)};
  module_algorithm& m = a.forward;
  const Var c = m.c, n = m.n, i = m.i, j = m.j, b = m.b, h = m.h;
  Var e("e");
  const int head_dim = desc.head_dim(), embed = desc.embed, kv_embed = desc.kv_embed(), extra = desc.extra_keys();
  const Expr batch = m.query.dim(desc.batch_major ? 2 : 1).extent();

  // The output projection: its input is the attention's result, heads packed.
  a.output_gradient(n, i, b) = as_float(m, desc.batch_major ? m.d_output(n, i, b) : m.d_output(n, b, i));
  a.attention_result(c, i, b) = m.attention.output(c % head_dim, c / head_dim, i, b);
  a.out_projection = define_linear_gradients("out_projection", a.attention_result, a.output_gradient,
                                             float_weight(m, m.out_weight), embed, m.query_length, batch, m);
  a.attention_gradient(e, h, i, b) = a.out_projection.input(h * head_dim + e, i, b);

  // The attention, from its recomputed output and log-sum-exp.
  a.lse = define_row_log_sum_exp(m.attention);
  a.attention = define_backward_of(m.attention, backward_tiles, m.attention.output, a.lse.lse, a.attention_gradient);
  // Kernel key j + extra is input key j (the appended keys come first).
  a.q_gradient(n, i, b) = a.attention.dq(n % head_dim, n / head_dim, i, b);
  a.k_gradient(n, j, b) = a.attention.dk(n % head_dim, n / head_dim, j + extra, b);
  a.v_gradient(n, j, b) = a.attention.dv(n % head_dim, n / head_dim, j + extra, b);
  if (desc.bias_kv) {
    // bias_k and bias_v are kernel key 0 of every sequence.
    a.appended_batch = RDom(0, batch, "rappended");
    a.bias_k_gradient(n) = 0.0f;
    a.bias_k_gradient(n) += a.attention.dk(n % head_dim, n / head_dim, 0, a.appended_batch);
    a.bias_v_gradient(n) = 0.0f;
    a.bias_v_gradient(n) += a.attention.dv(n % head_dim, n / head_dim, 0, a.appended_batch);
  }

  // The input projections; with self_attention all three read the query.
  const Func& key_in = desc.self_attn ? m.query_in : m.key_in;
  const Func& value_in = desc.self_attn ? m.query_in : m.value_in;
  a.q_projection = define_linear_gradients("q_projection", m.query_in, a.q_gradient, float_weight(m, m.q_weight), embed,
                                           m.query_length, batch, m);
  a.k_projection = define_linear_gradients("k_projection", key_in, a.k_gradient, float_weight(m, m.k_weight), kv_embed,
                                           m.input_key_length, batch, m);
  a.v_projection = define_linear_gradients("v_projection", value_in, a.v_gradient, float_weight(m, m.v_weight),
                                           kv_embed, m.input_key_length, batch, m);
  if (desc.self_attn)
    a.query_gradient(c, i, b) = a.q_projection.input(c, i, b) + a.k_projection.input(c, i, b) + a.v_projection.input(c, i, b);
  else
    a.query_gradient(c, i, b) = a.q_projection.input(c, i, b);

  // The outputs, in the schema's order, each in its tensor's type and layout.
  auto in_layout = [&](const std::string& name, const Func& gradient) {
    Func f(name);
    if (desc.batch_major) f(c, i, b) = as_element(m, gradient(c, i, b));
    else f(c, b, i) = as_element(m, gradient(c, i, b));
    return f;
  };
  auto matrix = [&](const std::string& name, const Func& gradient) {
    Func f(name);
    f(c, n) = as_element(m, gradient(c, n));
    return f;
  };
  auto vector = [&](const std::string& name, const Func& gradient) {
    Func f(name);
    f(n) = as_element(m, gradient(n));
    return f;
  };
  for (const module_argument& argument : module_backward_arguments(desc)) {
    switch (argument.slot) {
      case module_slot::d_query: a.gradients.push_back(in_layout("d_query", a.query_gradient)); break;
      case module_slot::d_key: a.gradients.push_back(in_layout("d_key", a.k_projection.input)); break;
      case module_slot::d_value: a.gradients.push_back(in_layout("d_value", a.v_projection.input)); break;
      case module_slot::d_q_weight: a.gradients.push_back(matrix("d_q_weight", a.q_projection.weight)); break;
      case module_slot::d_k_weight: a.gradients.push_back(matrix("d_k_weight", a.k_projection.weight)); break;
      case module_slot::d_v_weight: a.gradients.push_back(matrix("d_v_weight", a.v_projection.weight)); break;
      case module_slot::d_q_bias: a.gradients.push_back(vector("d_q_bias", a.q_projection.bias)); break;
      case module_slot::d_k_bias: a.gradients.push_back(vector("d_k_bias", a.k_projection.bias)); break;
      case module_slot::d_v_bias: a.gradients.push_back(vector("d_v_bias", a.v_projection.bias)); break;
      case module_slot::d_bias_k: a.gradients.push_back(vector("d_bias_k", a.bias_k_gradient)); break;
      case module_slot::d_bias_v: a.gradients.push_back(vector("d_bias_v", a.bias_v_gradient)); break;
      case module_slot::d_out_weight: a.gradients.push_back(matrix("d_out_weight", a.out_projection.weight)); break;
      case module_slot::d_out_bias: a.gradients.push_back(vector("d_out_bias", a.out_projection.bias)); break;
      default: break;  // the inputs
    }
  }
  return a;
}

}  // namespace attngen::codegen
