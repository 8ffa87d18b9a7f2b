#include "reference/reference_modifiers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>

namespace attngen::testing {

namespace {

double read_tensor(const attention_problem& p, const expr_node& node, const double* indices) {
  const int t = p.desc.captures.tensor_index(node.name);
  const std::vector<int> shape = p.capture_shape(t);
  std::size_t offset = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const int index = std::clamp(int(indices[d]), 0, shape[d] - 1);
    offset = offset * std::size_t(shape[d]) + std::size_t(index);
  }
  return p.captures[t][offset];
}

// Integer values are whole doubles within int32 (the DSL's integers are 32-bit).
std::int32_t integer_of(double x) { return std::int32_t(x); }

// a - b * floor(a / b), the divisor's sign: an integer x % 0 is x (x / 0 is 0), a float one NaN. fmod
// is exact, so floats are not rounded through a / b.
double remainder(double a, double b, bool integer) {
  if (integer && b == 0) return a;
  const double r = std::fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

double evaluate(const modifier_graph& g, int index, const attention_problem& p, const modifier_point& at) {
  const expr_node& n = g.nodes[index];
  double x[3] = {};
  for (int o = 0; o < n.operand_count; ++o) x[o] = evaluate(g, n.operands[o], p, at);
  const bool integer = n.kind == value_kind::integer;
  switch (n.op) {
    case expr_op::constant: return n.number;
    case expr_op::score: return at.score;
    case expr_op::batch: return at.batch;
    case expr_op::head: return at.head;
    case expr_op::query: return at.query + p.query_start();
    case expr_op::key: return at.key + p.key_start();
    case expr_op::query_length: return p.query_total();
    case expr_op::key_length: return p.key_total();
    case expr_op::scalar: return p.scalars[p.desc.captures.scalar_index(n.name)];
    case expr_op::tensor_read: return read_tensor(p, n, x);
    case expr_op::add: return x[0] + x[1];
    case expr_op::sub: return x[0] - x[1];
    case expr_op::mul: return x[0] * x[1];
    case expr_op::div:
      if (!integer) return x[0] / x[1];
      return x[1] == 0 ? 0.0 : std::floor(x[0] / x[1]);
    case expr_op::modulo: return remainder(x[0], x[1], integer);
    case expr_op::neg: return -x[0];
    case expr_op::min: return std::min(x[0], x[1]);
    case expr_op::max: return std::max(x[0], x[1]);
    case expr_op::abs: return std::abs(x[0]);
    case expr_op::exp: return std::exp(x[0]);
    case expr_op::log: return std::log(x[0]);
    case expr_op::tanh: return std::tanh(x[0]);
    case expr_op::sin: return std::sin(x[0]);
    case expr_op::cos: return std::cos(x[0]);
    case expr_op::tan: return std::tan(x[0]);
    case expr_op::asin: return std::asin(x[0]);
    case expr_op::acos: return std::acos(x[0]);
    case expr_op::atan: return std::atan(x[0]);
    case expr_op::sinh: return std::sinh(x[0]);
    case expr_op::cosh: return std::cosh(x[0]);
    case expr_op::exp2: return std::exp2(x[0]);
    case expr_op::sqrt: return std::sqrt(x[0]);
    case expr_op::floor: return std::floor(x[0]);
    case expr_op::ceil: return std::ceil(x[0]);
    case expr_op::round: return std::nearbyint(x[0]);  // halves to even in the default rounding mode
    case expr_op::sigmoid: return 1.0 / (1.0 + std::exp(-x[0]));
    case expr_op::erf: return std::erf(x[0]);
    case expr_op::pow: return std::pow(x[0], x[1]);
    case expr_op::atan2: return std::atan2(x[0], x[1]);
    case expr_op::to_float: return x[0];
    case expr_op::bit_and: return integer_of(x[0]) & integer_of(x[1]);
    case expr_op::bit_or: return integer_of(x[0]) | integer_of(x[1]);
    case expr_op::bit_xor: return integer_of(x[0]) ^ integer_of(x[1]);
    case expr_op::bit_not: return ~integer_of(x[0]);
    case expr_op::shift_left:
      return std::int32_t(std::uint32_t(integer_of(x[0])) << std::clamp(integer_of(x[1]), 0, 31));
    case expr_op::shift_right: return integer_of(x[0]) >> std::clamp(integer_of(x[1]), 0, 31);
    case expr_op::lt: return x[0] < x[1];
    case expr_op::le: return x[0] <= x[1];
    case expr_op::gt: return x[0] > x[1];
    case expr_op::ge: return x[0] >= x[1];
    case expr_op::eq: return x[0] == x[1];
    case expr_op::ne: return x[0] != x[1];
    case expr_op::logical_and: return x[0] != 0 && x[1] != 0;
    case expr_op::logical_or: return x[0] != 0 || x[1] != 0;
    case expr_op::logical_not: return x[0] == 0;
    case expr_op::select: return x[0] != 0 ? x[1] : x[2];
  }
  throw std::logic_error("evaluate_modifier: unknown node kind");
}

// Forward-mode differentiation with respect to the nodes `seed` picks (the score leaves, or one read
// of a capture): each node's value and derivative.
struct dual {
  double value = 0, derivative = 0;
};

dual differentiate(const modifier_graph& g, int index, const std::function<bool(int)>& seed, const attention_problem& p,
                   const modifier_point& at) {
  const expr_node& n = g.nodes[index];
  if (seed(index)) return {evaluate(g, index, p, at), 1.0};
  if (n.kind != value_kind::floating) return {evaluate(g, index, p, at), 0.0};
  dual x[3];
  for (int o = 0; o < n.operand_count; ++o) x[o] = differentiate(g, n.operands[o], seed, p, at);
  const double a = x[0].value, da = x[0].derivative, b = x[1].value, db = x[1].derivative;
  const double value = evaluate(g, index, p, at);
  constexpr double pi = 3.14159265358979323846;
  switch (n.op) {
    case expr_op::add: return {value, da + db};
    case expr_op::sub: return {value, da - db};
    case expr_op::mul: return {value, da * b + a * db};
    case expr_op::div: return {value, (da * b - a * db) / (b * b)};
    case expr_op::modulo: return {value, da - db * std::floor(a / b)};
    case expr_op::neg: return {value, -da};
    case expr_op::min: return {value, a <= b ? da : db};
    case expr_op::max: return {value, a >= b ? da : db};
    case expr_op::abs: return {value, a < 0 ? -da : da};
    case expr_op::exp: return {value, value * da};
    case expr_op::log: return {value, da / a};
    case expr_op::tanh: return {value, (1 - value * value) * da};
    case expr_op::sin: return {value, std::cos(a) * da};
    case expr_op::cos: return {value, -std::sin(a) * da};
    case expr_op::tan: return {value, (1 + value * value) * da};
    case expr_op::asin: return {value, da / std::sqrt(1 - a * a)};
    case expr_op::acos: return {value, -da / std::sqrt(1 - a * a)};
    case expr_op::atan: return {value, da / (1 + a * a)};
    case expr_op::sinh: return {value, std::cosh(a) * da};
    case expr_op::cosh: return {value, std::sinh(a) * da};
    case expr_op::exp2: return {value, value * std::log(2.0) * da};
    case expr_op::sqrt: return {value, da / (2 * value)};
    case expr_op::sigmoid: return {value, value * (1 - value) * da};
    case expr_op::erf: return {value, 2 / std::sqrt(pi) * std::exp(-a * a) * da};
    case expr_op::pow: return {value, b * std::pow(a, b - 1) * da + (db != 0 ? value * std::log(a) * db : 0.0)};
    case expr_op::atan2: return {value, (b * da - a * db) / (a * a + b * b)};
    case expr_op::select: return {value, x[0].value != 0 ? x[1].derivative : x[2].derivative};
    default: return {value, 0.0};  // leaves not seeded, to_float, floor, ceil, round
  }
}

}  // namespace

double evaluate_modifier(const modifier_graph& graph, const attention_problem& p, const modifier_point& at) {
  return evaluate(graph, graph.count - 1, p, at);
}

double modifier_score_derivative(const modifier_graph& graph, const attention_problem& p, const modifier_point& at) {
  const auto is_score = [&](int node) { return graph.nodes[node].op == expr_op::score; };
  return differentiate(graph, graph.count - 1, is_score, p, at).derivative;
}

std::vector<capture_read_derivative> modifier_capture_derivatives(const modifier_graph& graph,
                                                                  const attention_problem& p,
                                                                  const modifier_point& at) {
  std::vector<capture_read_derivative> reads;
  const capture_table& captures = p.desc.captures;
  for (int r = 0; r < graph.count; ++r) {
    const expr_node& n = graph.nodes[r];
    const bool float_read = n.op == expr_op::tensor_read && n.kind == value_kind::floating;
    if (!float_read && n.op != expr_op::scalar) continue;
    const double derivative = differentiate(graph, graph.count - 1, [r](int node) { return node == r; }, p, at).derivative;
    if (n.op == expr_op::scalar) {
      reads.push_back({true, captures.scalar_index(n.name), 0, derivative});
      continue;
    }
    const int t = captures.tensor_index(n.name);
    const std::vector<int> shape = p.capture_shape(t);
    std::size_t offset = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const int index = std::clamp(int(evaluate(graph, n.operands[d], p, at)), 0, shape[d] - 1);
      offset = offset * std::size_t(shape[d]) + std::size_t(index);
    }
    reads.push_back({false, t, offset, derivative});
  }
  return reads;
}

}  // namespace attngen::testing
