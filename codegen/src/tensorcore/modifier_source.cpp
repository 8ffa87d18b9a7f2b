#include "modifier_source.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

namespace attngen::codegen::tensorcore_source {

namespace {

const char* type_of(value_kind kind) {
  switch (kind) {
    case value_kind::boolean: return "bool";
    case value_kind::integer: return "int";
    case value_kind::floating: break;
  }
  return "float";
}

class modifier_writer {
 public:
  modifier_writer(const modifier_graph& graph, const capture_table& captures, const std::string& prefix)
      : graph_(graph), captures_(captures), prefix_(prefix) {}

  // The right-hand side of node `index`, its operands being earlier nodes' constants.
  std::string value(int index) const {
    const expr_node& node = graph_.nodes[index];
    std::vector<std::string> x;
    for (int o = 0; o < node.operand_count; ++o) x.push_back(operand(node, o));
    switch (node.op) {
      case expr_op::constant: return constant(node);
      case expr_op::score: return "score";
      case expr_op::batch: return "b";
      case expr_op::head: return "h";
      case expr_op::query: return "q";
      case expr_op::key: return "kv";
      case expr_op::query_length: return "q_len";
      case expr_op::key_length: return "kv_len";
      case expr_op::scalar: return "in.scalars[" + std::to_string(captures_.scalar_index(node.name)) + "]";
      case expr_op::tensor_read: return tensor_read(node, x);
      case expr_op::add: return infix(x, "+");
      case expr_op::sub: return infix(x, "-");
      case expr_op::mul: return infix(x, "*");
      case expr_op::div: return node.kind == value_kind::integer ? call("modifier::divide", x) : infix(x, "/");
      case expr_op::modulo: return call("modifier::remainder", x);
      case expr_op::neg: return "(-" + x[0] + ")";
      case expr_op::min: return call("modifier::smaller", x);
      case expr_op::max: return call("modifier::larger", x);
      case expr_op::abs: return call("modifier::absolute", x);
      case expr_op::exp: return call("expf", x);
      case expr_op::log: return call("logf", x);
      case expr_op::tanh: return call("tanhf", x);
      case expr_op::sin: return call("sinf", x);
      case expr_op::cos: return call("cosf", x);
      case expr_op::tan: return call("tanf", x);
      case expr_op::asin: return call("asinf", x);
      case expr_op::acos: return call("acosf", x);
      case expr_op::atan: return call("atanf", x);
      case expr_op::sinh: return call("sinhf", x);
      case expr_op::cosh: return call("coshf", x);
      case expr_op::exp2: return call("exp2f", x);
      case expr_op::sqrt: return call("sqrtf", x);
      case expr_op::floor: return call("floorf", x);
      case expr_op::ceil: return call("ceilf", x);
      case expr_op::round: return call("rintf", x);  // halves to even, as Halide's round
      case expr_op::sigmoid: return call("modifier::sigmoid", x);
      case expr_op::erf: return call("erff", x);
      case expr_op::pow: return call("powf", x);
      case expr_op::atan2: return call("atan2f", x);
      case expr_op::to_float: return "float(" + x[0] + ")";
      case expr_op::bit_and: return infix(x, "&");
      case expr_op::bit_or: return infix(x, "|");
      case expr_op::bit_xor: return infix(x, "^");
      case expr_op::bit_not: return "(~" + x[0] + ")";
      case expr_op::shift_left: return call("modifier::shift_left", x);
      case expr_op::shift_right: return call("modifier::shift_right", x);
      case expr_op::lt: return infix(x, "<");
      case expr_op::le: return infix(x, "<=");
      case expr_op::gt: return infix(x, ">");
      case expr_op::ge: return infix(x, ">=");
      case expr_op::eq: return infix(x, "==");
      case expr_op::ne: return infix(x, "!=");
      case expr_op::logical_and: return infix(x, "&&");
      case expr_op::logical_or: return infix(x, "||");
      case expr_op::logical_not: return "(!" + x[0] + ")";
      case expr_op::select: return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")";
    }
    throw std::logic_error("modifier_statements: unknown node kind");
  }

  // The range of node `index` over a tile (attngen/tensorcore/modifier_ranges.hpp), its operands
  // being earlier nodes' ranges; the leaves b, h, q, kv, q_len and kv_len are ranges already.
  std::string range(int index) const {
    const expr_node& node = graph_.nodes[index];
    std::vector<std::string> x;
    for (int o = 0; o < node.operand_count; ++o) x.push_back(range_operand(node, o));
    switch (node.op) {
      case expr_op::constant: return "ranges::point(" + constant(node) + ")";
      case expr_op::score: return "ranges::anything()";
      case expr_op::batch: return "b";
      case expr_op::head: return "h";
      case expr_op::query: return "q";
      case expr_op::key: return "kv";
      case expr_op::query_length: return "q_len";
      case expr_op::key_length: return "kv_len";
      case expr_op::scalar: {
        const std::string scalar = "in.scalars[" + std::to_string(captures_.scalar_index(node.name)) + "]";
        return "ranges::point(" + (node.kind == value_kind::integer ? "int(" + scalar + ")" : scalar) + ")";
      }
      case expr_op::tensor_read: return tensor_read(node, x, "ranges::read");
      case expr_op::add: return call("ranges::add", x);
      case expr_op::sub: return call("ranges::sub", x);
      case expr_op::mul: return call("ranges::mul", x);
      case expr_op::div: return call("ranges::div", x);
      case expr_op::modulo: return call("ranges::remainder", x);
      case expr_op::neg: return call("ranges::neg", x);
      case expr_op::min: return call("ranges::smaller", x);
      case expr_op::max: return call("ranges::larger", x);
      case expr_op::abs: return call("ranges::absolute", x);
      case expr_op::exp: return call("ranges::exp", x);
      case expr_op::log: return call("ranges::log", x);
      case expr_op::tanh: return call("ranges::tanh", x);
      case expr_op::sin: return call("ranges::sin", x);
      case expr_op::cos: return call("ranges::cos", x);
      case expr_op::tan: return call("ranges::tan", x);
      case expr_op::asin: return call("ranges::asin", x);
      case expr_op::acos: return call("ranges::acos", x);
      case expr_op::atan: return call("ranges::atan", x);
      case expr_op::sinh: return call("ranges::sinh", x);
      case expr_op::cosh: return call("ranges::cosh", x);
      case expr_op::exp2: return call("ranges::exp2", x);
      case expr_op::sqrt: return call("ranges::sqrt", x);
      case expr_op::floor: return call("ranges::floor", x);
      case expr_op::ceil: return call("ranges::ceil", x);
      case expr_op::round: return call("ranges::round", x);
      case expr_op::sigmoid: return call("ranges::sigmoid", x);
      case expr_op::erf: return call("ranges::erf", x);
      case expr_op::pow: return call("ranges::pow", x);
      case expr_op::atan2: return call("ranges::atan2", x);
      case expr_op::to_float: return call("ranges::to_float", x);
      case expr_op::bit_and: return call("ranges::bit_and", x);
      case expr_op::bit_or: return call("ranges::bit_or", x);
      case expr_op::bit_xor: return call("ranges::bit_xor", x);
      case expr_op::bit_not: return call("ranges::bit_not", x);
      case expr_op::shift_left: return call("ranges::shift_left", x);
      case expr_op::shift_right: return call("ranges::shift_right", x);
      case expr_op::lt: return call("ranges::lt", x);
      case expr_op::le: return call("ranges::le", x);
      case expr_op::gt: return call("ranges::gt", x);
      case expr_op::ge: return call("ranges::ge", x);
      case expr_op::eq: return call("ranges::eq", x);
      case expr_op::ne: return call("ranges::ne", x);
      case expr_op::logical_and: return call("ranges::logical_and", x);
      case expr_op::logical_or: return call("ranges::logical_or", x);
      case expr_op::logical_not: return call("ranges::logical_not", x);
      case expr_op::select: return call("ranges::select", x);
    }
    throw std::logic_error("modifier_range_statements: unknown node kind");
  }

 private:
  // Operand o's range as the node's rule takes it, converted to float as operand() converts it.
  std::string range_operand(const expr_node& node, int o) const {
    const std::string name = prefix_ + std::to_string(node.operands[o]);
    return converts_to_float(node, o) ? "ranges::to_float(" + name + ")" : name;
  }

  bool converts_to_float(const expr_node& node, int o) const {
    const value_kind kind = graph_.nodes[node.operands[o]].kind;
    const typing rule = info(node.op).rule;
    const bool takes_float = rule == typing::float_math || (rule == typing::numbers && node.kind == value_kind::floating);
    return takes_float && kind == value_kind::integer;
  }

  // Operand o of `node` as the node's rule takes it: numbers of mixed kinds, and the float
  // functions' integer operands, as float (the Halide lowering converts them the same way).
  std::string operand(const expr_node& node, int o) const {
    const std::string name = prefix_ + std::to_string(node.operands[o]);
    return converts_to_float(node, o) ? "float(" + name + ")" : name;
  }

  // Infinities become the largest finite floats, as in the Halide lowering.
  static std::string constant(const expr_node& node) {
    switch (node.kind) {
      case value_kind::boolean: return node.number != 0.0f ? "true" : "false";
      case value_kind::integer: return std::to_string(static_cast<int>(node.number));
      case value_kind::floating: break;
    }
    constexpr float largest = std::numeric_limits<float>::max();
    return float_literal(std::fmax(-largest, std::fmin(largest, node.number)));
  }

  std::string tensor_read(const expr_node& node, const std::vector<std::string>& indices,
                          const char* function = "modifier::read") const {
    const int tensor = captures_.tensor_index(node.name);
    const char* element = captures_.tensors[tensor].type == capture_type::i32 ? "int" : "float";
    std::string text = std::string(function) + "<" + element + ">(in.tensors[" + std::to_string(tensor) + "]";
    for (const std::string& index : indices) text += ", " + index;
    return text + ")";
  }

  static std::string infix(const std::vector<std::string>& x, const char* op) {
    return "(" + x[0] + " " + op + " " + x[1] + ")";
  }
  static std::string call(const char* function, const std::vector<std::string>& x) {
    std::string text = std::string(function) + "(";
    for (std::size_t n = 0; n < x.size(); ++n) text += (n ? ", " : "") + x[n];
    return text + ")";
  }

  const modifier_graph& graph_;
  const capture_table& captures_;
  const std::string& prefix_;
};

}  // namespace

std::string float_literal(float value) {
  char text[48];
  std::snprintf(text, sizeof text, "%af", double(value));
  return text;
}

std::string modifier_statements(const modifier_graph& graph, const capture_table& captures, const std::string& prefix,
                                const std::string& indent) {
  const modifier_writer writer(graph, captures, prefix);
  std::string text;
  for (int n = 0; n < graph.count; ++n)
    text += indent + "const " + type_of(graph.nodes[n].kind) + " " + prefix + std::to_string(n) + " = " +
            writer.value(n) + ";\n";
  return text;
}

std::string modifier_range_statements(const modifier_graph& graph, const capture_table& captures,
                                      const std::string& prefix, const std::string& indent) {
  const modifier_writer writer(graph, captures, prefix);
  std::string text;
  for (int n = 0; n < graph.count; ++n)
    text += indent + "const auto " + prefix + std::to_string(n) + " = " + writer.range(n) + ";\n";
  return text;
}

}  // namespace attngen::codegen::tensorcore_source
