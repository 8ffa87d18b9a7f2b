#include "attngen/codegen/modifiers.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace attngen::codegen {

using namespace Halide;

namespace {

// Lowers one graph: each node kind has its own function, called on the node's lowered operands.
class modifier_lowering {
 public:
  modifier_lowering(const modifier_graph& graph, const capture_table& captures, const capture_params& params,
                    const modifier_leaves& leaves)
      : graph_(graph), captures_(captures), params_(params), leaves_(leaves) {}

  Expr lower(int index) {
    const expr_node& node = graph_.nodes[index];
    if (leaves_.key_read && reads_at_key_alone(graph_, index)) return leaves_.key_read(index);
    std::vector<Expr> operands;
    for (int o = 0; o < node.operand_count; ++o) operands.push_back(lower(node.operands[o]));
    switch (node.op) {
      case expr_op::constant: return constant(node);
      case expr_op::score: return leaf(leaves_.score, "score");
      case expr_op::batch: return leaf(leaves_.batch, "b");
      case expr_op::head: return leaf(leaves_.head, "h");
      case expr_op::query: return leaf(leaves_.query, "q");
      case expr_op::key: return leaf(leaves_.key, "kv");
      case expr_op::query_length: return leaf(leaves_.query_length, "q_len");
      case expr_op::key_length: return leaf(leaves_.key_length, "kv_len");
      case expr_op::scalar: return scalar(node);
      case expr_op::tensor_read: return tensor_read(node, operands);
      case expr_op::add: return operands[0] + operands[1];
      case expr_op::sub: return operands[0] - operands[1];
      case expr_op::mul: return operands[0] * operands[1];
      case expr_op::div: return division(node, operands[0], operands[1]);
      case expr_op::modulo: return remainder(node, operands[0], operands[1]);
      case expr_op::neg: return -operands[0];
      case expr_op::min: return min(operands[0], operands[1]);
      case expr_op::max: return max(operands[0], operands[1]);
      case expr_op::abs: return absolute(node, operands[0]);
      case expr_op::exp: return exp(operands[0]);
      case expr_op::log: return log(operands[0]);
      case expr_op::tanh: return tanh(operands[0]);
      case expr_op::sin: return sin(operands[0]);
      case expr_op::cos: return cos(operands[0]);
      case expr_op::tan: return tan(operands[0]);
      case expr_op::asin: return asin(operands[0]);
      case expr_op::acos: return acos(operands[0]);
      case expr_op::atan: return atan(operands[0]);
      case expr_op::sinh: return sinh(operands[0]);
      case expr_op::cosh: return cosh(operands[0]);
      case expr_op::exp2: return pow(2.0f, operands[0]);
      case expr_op::sqrt: return sqrt(operands[0]);
      case expr_op::floor: return floor(operands[0]);
      case expr_op::ceil: return ceil(operands[0]);
      case expr_op::round: return round(operands[0]);
      case expr_op::sigmoid: return sigmoid(operands[0]);
      case expr_op::erf: return erf(operands[0]);
      case expr_op::pow: return pow(operands[0], operands[1]);
      case expr_op::atan2: return atan2(operands[0], operands[1]);
      case expr_op::to_float: return cast<float>(operands[0]);
      case expr_op::bit_and: return operands[0] & operands[1];
      case expr_op::bit_or: return operands[0] | operands[1];
      case expr_op::bit_xor: return operands[0] ^ operands[1];
      case expr_op::bit_not: return ~operands[0];
      case expr_op::shift_left: return operands[0] << shift_count(operands[1]);
      case expr_op::shift_right: return operands[0] >> shift_count(operands[1]);
      case expr_op::lt: return operands[0] < operands[1];
      case expr_op::le: return operands[0] <= operands[1];
      case expr_op::gt: return operands[0] > operands[1];
      case expr_op::ge: return operands[0] >= operands[1];
      case expr_op::eq: return operands[0] == operands[1];
      case expr_op::ne: return operands[0] != operands[1];
      case expr_op::logical_and: return operands[0] && operands[1];
      case expr_op::logical_or: return operands[0] || operands[1];
      case expr_op::logical_not: return !operands[0];
      case expr_op::select: return select(operands[0], operands[1], operands[2]);
    }
    throw std::logic_error("lower_modifier: unknown node kind");
  }

 private:
  // Infinities become the largest finite floats: Halide compiles with no-Inf assumptions, under which
  // LLVM may fold arithmetic on an infinite constant to poison. -FLT_MAX is still a masked score.
  static Expr constant(const expr_node& node) {
    switch (node.kind) {
      case value_kind::boolean: return node.number != 0.0f ? Internal::const_true() : Internal::const_false();
      case value_kind::integer: return Expr(static_cast<int>(node.number));
      case value_kind::floating: break;
    }
    constexpr float largest = std::numeric_limits<float>::max();
    return Expr(std::clamp(node.number, -largest, largest));
  }

  static Expr leaf(const Expr& value, const char* name) {
    if (!value.defined()) throw std::logic_error(std::string("lower_modifier: `") + name + "` has no value here");
    return value;
  }

  Expr scalar(const expr_node& node) const { return params_.scalars(captures_.scalar_index(node.name)); }

  // Indices are outermost first, Halide's dimensions innermost first; each is clamped into its extent.
  Expr tensor_read(const expr_node& node, const std::vector<Expr>& indices) const {
    const ImageParam& tensor = params_.tensors[captures_.tensor_index(node.name)];
    std::vector<Expr> halide_indices;
    for (int d = int(indices.size()) - 1; d >= 0; --d) {
      const int halide_dim = int(indices.size()) - 1 - d;
      halide_indices.push_back(clamp(indices[d], 0, tensor.dim(halide_dim).extent() - 1));
    }
    return tensor(halide_indices);
  }

  // Integer division rounds down and x / 0 is 0. Halide's rounds down only for a positive divisor
  // (Euclidean for a negative one), and floor(a / b) is (-a) / (-b) when b is negative.
  static Expr division(const expr_node& node, const Expr& a, const Expr& b) {
    if (node.kind != value_kind::integer) return a / b;
    return select(b < 0, (-a) / (-b), a / b);
  }

  // The remainder of the division that rounds down, a - b * (a / b): an integer x % 0 is x. Halide's
  // integer % is Euclidean (never negative), so a negative divisor's nonzero remainders move by b.
  static Expr remainder(const expr_node& node, const Expr& a, const Expr& b) {
    if (node.kind != value_kind::integer) return a - b * floor(a / b);
    const Expr euclidean = a % b;
    return select(b == 0, a, b < 0 && euclidean != 0, euclidean + b, euclidean);
  }

  static Expr shift_count(const Expr& count) { return clamp(count, 0, 31); }

  // 1 / (1 + e^-x) without overflow: e^-|x| stays in (0, 1].
  static Expr sigmoid(const Expr& x) {
    const Expr e = exp(-abs(x));
    return select(x >= 0.0f, 1.0f / (1.0f + e), e / (1.0f + e));
  }

  // Halide's abs of an integer is unsigned, and Halide 14's interval analysis of it wraps when the
  // interval spans zero: integers take max(a, -a), whose bounds are exact.
  static Expr absolute(const expr_node& node, const Expr& a) {
    return node.kind == value_kind::integer ? max(a, -a) : abs(a);
  }

  const modifier_graph& graph_;
  const capture_table& captures_;
  const capture_params& params_;
  const modifier_leaves& leaves_;
};

Type type_of(capture_type t) { return t == capture_type::i32 ? Int(32) : Float(32); }

// Whether the subgraph under `node` has a leaf of kind `leaf`.
bool uses(const modifier_graph& graph, int node, expr_op leaf) {
  const expr_node& n = graph.nodes[node];
  if (n.op == leaf) return true;
  for (int o = 0; o < n.operand_count; ++o)
    if (uses(graph, n.operands[o], leaf)) return true;
  return false;
}

}  // namespace

capture_params capture_params::declare(const capture_table& captures) {
  capture_params params;
  for (int t = 0; t < captures.tensor_count; ++t) {
    const tensor_capture& declared = captures.tensors[t];
    params.tensors.emplace_back(type_of(declared.type), declared.rank, "capture_" + std::string(declared.name.view()));
  }
  if (captures.scalar_count > 0) params.scalars = ImageParam(Float(32), 1, "scalars");
  return params;
}

std::vector<Argument> capture_params::arguments() const {
  std::vector<Argument> args(tensors.begin(), tensors.end());
  if (scalars.defined()) args.push_back(scalars);
  return args;
}

Expr lower_modifier(const modifier_graph& graph, const capture_table& captures, const capture_params& params,
                    const modifier_leaves& leaves) {
  return lower_modifier_node(graph, captures, params, leaves, graph.count - 1);
}

Expr lower_modifier_node(const modifier_graph& graph, const capture_table& captures, const capture_params& params,
                         const modifier_leaves& leaves, int node) {
  return modifier_lowering(graph, captures, params, leaves).lower(node);
}

Expr gathered_index(Expr index, Expr length, Expr unproven_zero) {
  return clamp(index | unproven_zero, 0, length - 1);
}

bool reads_at_key_alone(const modifier_graph& graph, int node) {
  return graph.nodes[node].op == expr_op::tensor_read && uses(graph, node, expr_op::key) &&
         !uses(graph, node, expr_op::score) && !uses(graph, node, expr_op::query) && !uses(graph, node, expr_op::head);
}

ImageParam declare_positions() {
  ImageParam positions(Int(32), 1, "positions");
  positions.dim(0).set_bounds(0, global_position_count);
  return positions;
}

modifier_leaves positions_origin(const ImageParam& positions) {
  modifier_leaves origin;
  origin.query = positions(int(global_position::query_start));
  origin.key = positions(int(global_position::key_start));
  origin.query_length = positions(int(global_position::query_total));
  origin.key_length = positions(int(global_position::key_total));
  return origin;
}

}  // namespace attngen::codegen
