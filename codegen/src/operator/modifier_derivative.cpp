#include <stdexcept>

#include "attngen/codegen/modifiers.hpp"

namespace attngen::codegen {

using namespace Halide;

namespace {

// d(root)/d(seed) for one graph: each node kind has its rule, applied to its operands' values (the
// forward lowering's) and their derivatives. Integer and boolean nodes carry no derivative; floor,
// ceil, round and the remainder's quotient are steps, of derivative 0 almost everywhere.
class modifier_differentiation {
 public:
  // With `seed` a node's index, the derivative is by that node's value; with -1, by the score.
  modifier_differentiation(const modifier_graph& graph, const capture_table& captures, const capture_params& params,
                           const modifier_leaves& leaves, int seed)
      : graph_(graph), captures_(captures), params_(params), leaves_(leaves), seed_(seed) {}

  Expr derivative(int index) {
    const expr_node& node = graph_.nodes[index];
    if (is_seed(index)) return Expr(1.0f);
    if (node.kind != value_kind::floating) return zero();
    if (!depends_on_seed(index)) return zero();
    std::vector<Expr> x, dx;
    for (int o = 0; o < node.operand_count; ++o) {
      x.push_back(value(node.operands[o]));
      dx.push_back(derivative(node.operands[o]));
    }
    switch (node.op) {
      case expr_op::add: return dx[0] + dx[1];
      case expr_op::sub: return dx[0] - dx[1];
      case expr_op::mul: return dx[0] * x[1] + x[0] * dx[1];
      case expr_op::div: return (dx[0] * x[1] - x[0] * dx[1]) / (x[1] * x[1]);
      case expr_op::modulo: return dx[0] - dx[1] * floor(x[0] / x[1]);
      case expr_op::neg: return -dx[0];
      case expr_op::min: return select(x[0] <= x[1], dx[0], dx[1]);
      case expr_op::max: return select(x[0] >= x[1], dx[0], dx[1]);
      case expr_op::abs: return select(x[0] < 0.0f, -dx[0], dx[0]);
      case expr_op::exp: return exp(x[0]) * dx[0];
      case expr_op::log: return dx[0] / x[0];
      case expr_op::tanh: {
        const Expr t = tanh(x[0]);
        return (1.0f - t * t) * dx[0];
      }
      case expr_op::sin: return cos(x[0]) * dx[0];
      case expr_op::cos: return -sin(x[0]) * dx[0];
      case expr_op::tan: {
        const Expr t = tan(x[0]);
        return (1.0f + t * t) * dx[0];
      }
      case expr_op::asin: return dx[0] / sqrt((1.0f - x[0]) * (1.0f + x[0]));
      case expr_op::acos: return -dx[0] / sqrt((1.0f - x[0]) * (1.0f + x[0]));
      case expr_op::atan: return dx[0] / (1.0f + x[0] * x[0]);
      case expr_op::sinh: return cosh(x[0]) * dx[0];
      case expr_op::cosh: return sinh(x[0]) * dx[0];
      case expr_op::exp2: return value(index) * ln2 * dx[0];
      case expr_op::sqrt: return dx[0] / (2.0f * value(index));
      case expr_op::floor: case expr_op::ceil: case expr_op::round: return zero();
      case expr_op::sigmoid: {
        const Expr s = value(index);
        return s * (1.0f - s) * dx[0];
      }
      case expr_op::erf: return two_over_sqrt_pi * exp(-x[0] * x[0]) * dx[0];
      case expr_op::pow: return power(index, x, dx);
      case expr_op::atan2: return (x[1] * dx[0] - x[0] * dx[1]) / (x[0] * x[0] + x[1] * x[1]);
      case expr_op::select: return select(x[0], dx[1], dx[2]);
      default: break;
    }
    throw std::logic_error("differentiate_modifier: no rule for a float node of this kind");
  }

 private:
  static constexpr float ln2 = 0.693147180559945309f;
  static constexpr float two_over_sqrt_pi = 1.12837916709551257f;

  static Expr zero() { return Expr(0.0f); }

  Expr value(int index) const { return lower_modifier_node(graph_, captures_, params_, leaves_, index); }

  bool is_seed(int index) const { return seed_ >= 0 ? index == seed_ : graph_.nodes[index].op == expr_op::score; }

  bool depends_on_seed(int index) const {
    if (is_seed(index)) return true;
    const expr_node& node = graph_.nodes[index];
    for (int o = 0; o < node.operand_count; ++o)
      if (depends_on_seed(node.operands[o])) return true;
    return false;
  }

  // d(a^b) = b a^(b-1) da + a^b ln(a) db; the second term only where the exponent varies with the
  // seed (a constant exponent allows a negative base).
  Expr power(int index, const std::vector<Expr>& x, const std::vector<Expr>& dx) {
    Expr d = x[1] * pow(x[0], x[1] - 1.0f) * dx[0];
    if (depends_on_seed(graph_.nodes[index].operands[1])) d += value(index) * log(x[0]) * dx[1];
    return d;
  }

  const modifier_graph& graph_;
  const capture_table& captures_;
  const capture_params& params_;
  const modifier_leaves& leaves_;
  int seed_;
};

}  // namespace

Expr differentiate_modifier(const modifier_graph& graph, const capture_table& captures, const capture_params& params,
                            const modifier_leaves& leaves, int by_node) {
  return modifier_differentiation(graph, captures, params, leaves, by_node).derivative(graph.count - 1);
}

}  // namespace attngen::codegen
