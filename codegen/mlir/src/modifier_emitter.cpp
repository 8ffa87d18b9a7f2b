#include "modifier_emitter.hpp"

#include <stdexcept>

namespace attngen::mlir_export {

namespace {

const char* type_of(value_kind kind) {
  switch (kind) {
    case value_kind::boolean: return "i1";
    case value_kind::integer: return "i32";
    case value_kind::floating: break;
  }
  return "f32";
}

class modifier_emission {
 public:
  modifier_emission(ssa_writer& out, const modifier_graph& graph, const capture_table& captures,
                    const capture_arguments& arguments, const modifier_leaves& leaves)
      : out_(out), graph_(graph), captures_(captures), arguments_(arguments), leaves_(leaves) {}

  std::string emit(int index) {
    const expr_node& node = graph_.nodes[index];
    std::vector<std::string> operands;
    for (int o = 0; o < node.operand_count; ++o) operands.push_back(emit(node.operands[o]));
    // The kind of the operands (comparisons yield booleans from numbers).
    const value_kind operand_kind =
        node.operand_count > 0 ? graph_.nodes[node.operands[node.operand_count - 1]].kind : node.kind;
    switch (node.op) {
      case expr_op::constant: return constant(node);
      case expr_op::score: return leaf(leaves_.score, "score");
      case expr_op::batch: return leaf(leaves_.batch, "b");
      case expr_op::head: return leaf(leaves_.head, "h");
      case expr_op::query: return leaf(leaves_.query, "q");
      case expr_op::key: return leaf(leaves_.key, "kv");
      case expr_op::query_length: return leaf(leaves_.query_length, "q_len");
      case expr_op::key_length: return leaf(leaves_.key_length, "kv_len");
      case expr_op::scalar: return arguments_.scalars.at(std::size_t(captures_.scalar_index(node.name)));
      case expr_op::tensor_read: return tensor_read(node, operands);
      case expr_op::add: return arithmetic(node.kind, "addi", "addf", operands);
      case expr_op::sub: return arithmetic(node.kind, "subi", "subf", operands);
      case expr_op::mul: return arithmetic(node.kind, "muli", "mulf", operands);
      case expr_op::div: return node.kind == value_kind::integer ? integer_division(operands) : binary("arith.divf", operands, "f32");
      case expr_op::modulo: return node.kind == value_kind::integer ? integer_remainder(operands) : float_remainder(operands);
      case expr_op::neg: return negation(node.kind, operands[0]);
      case expr_op::min: return extreme(node.kind, "slt", "olt", operands);
      case expr_op::max: return extreme(node.kind, "sgt", "ogt", operands);
      case expr_op::abs: return absolute(node.kind, operands[0]);
      case expr_op::exp: return math("exp", operands[0]);
      case expr_op::log: return math("log", operands[0]);
      case expr_op::tanh: return math("tanh", operands[0]);
      case expr_op::sin: return math("sin", operands[0]);
      case expr_op::cos: return math("cos", operands[0]);
      case expr_op::tan: return binary("arith.divf", {math("sin", operands[0]), math("cos", operands[0])}, "f32");
      case expr_op::asin: return math("atan2", operands[0], cosine_of_arcsine(operands[0]));
      case expr_op::acos: return math("atan2", cosine_of_arcsine(operands[0]), operands[0]);
      case expr_op::atan: return math("atan2", operands[0], out_.f32_constant(1.0f));
      case expr_op::sinh: return hyperbolic_sine(operands[0]);
      case expr_op::cosh: return hyperbolic_cosine(operands[0]);
      case expr_op::exp2: return math("exp2", operands[0]);
      case expr_op::sqrt: return math("sqrt", operands[0]);
      case expr_op::floor: return math("floor", operands[0]);
      case expr_op::ceil: return math("ceil", operands[0]);
      case expr_op::round: return round_half_even(operands[0]);
      case expr_op::sigmoid: return sigmoid(operands[0]);
      case expr_op::erf: return math("erf", operands[0]);
      case expr_op::pow: return math("powf", operands[0], operands[1]);
      case expr_op::atan2: return math("atan2", operands[0], operands[1]);
      case expr_op::to_float: return to_float(graph_.nodes[node.operands[0]].kind, operands[0]);
      case expr_op::bit_and: return binary("arith.andi", operands, "i32");
      case expr_op::bit_or: return binary("arith.ori", operands, "i32");
      case expr_op::bit_xor: return binary("arith.xori", operands, "i32");
      case expr_op::bit_not: return binary("arith.xori", {operands[0], out_.i32_constant(-1)}, "i32");
      case expr_op::shift_left: return binary("arith.shli", {operands[0], shift_count(operands[1])}, "i32");
      case expr_op::shift_right: return binary("arith.shrsi", {operands[0], shift_count(operands[1])}, "i32");
      case expr_op::lt: return comparison(operand_kind, "slt", "olt", operands);
      case expr_op::le: return comparison(operand_kind, "sle", "ole", operands);
      case expr_op::gt: return comparison(operand_kind, "sgt", "ogt", operands);
      case expr_op::ge: return comparison(operand_kind, "sge", "oge", operands);
      case expr_op::eq: return comparison(operand_kind, "eq", "oeq", operands);
      case expr_op::ne: return comparison(operand_kind, "ne", "une", operands);
      case expr_op::logical_and: return binary("arith.andi", operands, "i1");
      case expr_op::logical_or: return binary("arith.ori", operands, "i1");
      case expr_op::logical_not: return out_.value("arith.xori " + operands[0] + ", " + out_.bool_constant(true) + " : i1");
      case expr_op::select: return select(operands[0], operands[1], operands[2], type_of(node.kind));
    }
    throw std::logic_error("emit_modifier: unknown node kind");
  }

 private:
  std::string constant(const expr_node& node) {
    switch (node.kind) {
      case value_kind::boolean: return out_.bool_constant(node.number != 0.0f);
      case value_kind::integer: return out_.i32_constant(static_cast<int>(node.number));
      case value_kind::floating: break;
    }
    return out_.f32_constant(node.number);
  }

  static std::string leaf(const std::string& value, const char* name) {
    if (value.empty()) throw std::logic_error(std::string("emit_modifier: `") + name + "` has no value here");
    return value;
  }

  std::string binary(const std::string& op, const std::vector<std::string>& x, const char* type) {
    return out_.value(op + " " + x[0] + ", " + x[1] + " : " + type);
  }

  std::string math(const char* op, const std::string& x) { return out_.value(std::string("math.") + op + " " + x + " : f32"); }
  std::string math(const char* op, const std::string& x, const std::string& y) {
    return binary(std::string("math.") + op, {x, y}, "f32");
  }
  std::string f32(const char* op, const std::string& x, const std::string& y) {
    return binary(std::string("arith.") + op, {x, y}, "f32");
  }

  // MLIR 14 lowers neither math.asin, math.acos, math.atan nor the hyperbolic functions but tanh, nor
  // math.round: they are written with the functions it lowers.

  // sqrt(1 - x^2) as sqrt((1 - x)(1 + x)), exact near |x| = 1.
  std::string cosine_of_arcsine(const std::string& x) {
    const std::string one = out_.f32_constant(1.0f);
    return math("sqrt", f32("mulf", f32("subf", one, x), f32("addf", one, x)));
  }

  // (e^x - e^-x) / 2 as (expm1(x) - expm1(-x)) / 2, without cancellation near 0.
  std::string hyperbolic_sine(const std::string& x) {
    const std::string difference = f32("subf", math("expm1", x), math("expm1", negation(value_kind::floating, x)));
    return f32("mulf", difference, out_.f32_constant(0.5f));
  }

  std::string hyperbolic_cosine(const std::string& x) {
    const std::string sum = f32("addf", math("exp", x), math("exp", negation(value_kind::floating, x)));
    return f32("mulf", sum, out_.f32_constant(0.5f));
  }

  // floor(x), plus one where x is past the half or on a half with an odd floor (halves to even).
  std::string round_half_even(const std::string& x) {
    const std::string half = out_.f32_constant(0.5f), one = out_.f32_constant(1.0f), two = out_.f32_constant(2.0f);
    const std::string below = math("floor", x);
    const std::string fraction = f32("subf", x, below);
    const std::string odd_floor = out_.value(
        "arith.cmpf oeq, " + f32("subf", below, f32("mulf", two, math("floor", f32("mulf", below, half)))) + ", " +
        one + " : f32");
    const std::string past_half = out_.value("arith.cmpf ogt, " + fraction + ", " + half + " : f32");
    const std::string on_half = out_.value("arith.cmpf oeq, " + fraction + ", " + half + " : f32");
    const std::string up = binary("arith.ori", {past_half, binary("arith.andi", {on_half, odd_floor}, "i1")}, "i1");
    return select(up, f32("addf", below, one), below, "f32");
  }

  // 1 / (1 + e^-x) without overflow: e^-|x| stays in (0, 1], as the Halide lowering computes it.
  std::string sigmoid(const std::string& x) {
    const std::string one = out_.f32_constant(1.0f);
    const std::string e = math("exp", negation(value_kind::floating, math("abs", x)));
    const std::string denominator = f32("addf", one, e);
    const std::string positive = out_.value("arith.cmpf oge, " + x + ", " + out_.f32_constant(0.0f) + " : f32");
    return select(positive, f32("divf", one, denominator), f32("divf", e, denominator), "f32");
  }

  // a - b * floor(a / b), the divisor's sign.
  std::string float_remainder(const std::vector<std::string>& x) {
    return f32("subf", x[0], f32("mulf", x[1], math("floor", f32("divf", x[0], x[1]))));
  }

  // a - b * (a / b) with the division that rounds down: x % 0 is x.
  std::string integer_remainder(const std::vector<std::string>& x) {
    const std::string product = binary("arith.muli", {x[1], integer_division(x)}, "i32");
    return binary("arith.subi", {x[0], product}, "i32");
  }

  // LLVM's shifts are poison at 32 and beyond: counts are clamped into 0..31, as the DSL defines them.
  std::string shift_count(const std::string& count) {
    const std::string below = extreme(value_kind::integer, "slt", "olt", {count, out_.i32_constant(31)});
    return extreme(value_kind::integer, "sgt", "ogt", {below, out_.i32_constant(0)});
  }

  std::string arithmetic(value_kind kind, const char* integer_op, const char* float_op,
                         const std::vector<std::string>& x) {
    return kind == value_kind::integer ? binary(std::string("arith.") + integer_op, x, "i32")
                                       : binary(std::string("arith.") + float_op, x, "f32");
  }

  std::string select(const std::string& condition, const std::string& a, const std::string& b, const char* type) {
    return out_.value("select " + condition + ", " + a + ", " + b + " : " + type);
  }

  std::string comparison(value_kind kind, const char* integer_predicate, const char* float_predicate,
                         const std::vector<std::string>& x) {
    if (kind == value_kind::floating)
      return out_.value(std::string("arith.cmpf ") + float_predicate + ", " + x[0] + ", " + x[1] + " : f32");
    return out_.value(std::string("arith.cmpi ") + integer_predicate + ", " + x[0] + ", " + x[1] + " : " +
                      type_of(kind));
  }

  // min and max as a comparison and a select (MLIR 14 does not lower arith's min and max ops).
  std::string extreme(value_kind kind, const char* integer_predicate, const char* float_predicate,
                      const std::vector<std::string>& x) {
    return select(comparison(kind, integer_predicate, float_predicate, x), x[0], x[1], type_of(kind));
  }

  std::string negation(value_kind kind, const std::string& x) {
    if (kind == value_kind::floating) return out_.value("arith.negf " + x + " : f32");
    return out_.value("arith.subi " + out_.i32_constant(0) + ", " + x + " : i32");
  }

  std::string absolute(value_kind kind, const std::string& x) {
    if (kind == value_kind::floating) return out_.value("math.abs " + x + " : f32");
    return extreme(value_kind::integer, "sgt", "ogt", {x, negation(kind, x)});
  }

  std::string to_float(value_kind from, const std::string& x) {
    if (from == value_kind::floating) return x;
    if (from == value_kind::boolean) return out_.value("arith.uitofp " + x + " : i1 to f32");
    return out_.value("arith.sitofp " + x + " : i32 to f32");
  }

  // Integer division rounds down (towards negative infinity) and x / 0 is 0, as the DSL defines it.
  // LLVM's sdiv truncates and traps on 0, so the divisor is made safe and the quotient corrected
  // when the remainder's sign differs from the divisor's.
  std::string integer_division(const std::vector<std::string>& x) {
    const std::string zero = out_.i32_constant(0), one = out_.i32_constant(1);
    const std::string by_zero = out_.value("arith.cmpi eq, " + x[1] + ", " + zero + " : i32");
    const std::string divisor = select(by_zero, one, x[1], "i32");
    const std::string quotient = out_.value("arith.divsi " + x[0] + ", " + divisor + " : i32");
    const std::string remainder = out_.value("arith.remsi " + x[0] + ", " + divisor + " : i32");
    const std::string inexact = out_.value("arith.cmpi ne, " + remainder + ", " + zero + " : i32");
    const std::string signs_differ =
        out_.value("arith.xori " + out_.value("arith.cmpi slt, " + remainder + ", " + zero + " : i32") + ", " +
                   out_.value("arith.cmpi slt, " + divisor + ", " + zero + " : i32") + " : i1");
    const std::string round_down = out_.value("arith.andi " + inexact + ", " + signs_differ + " : i1");
    const std::string floored = select(round_down, out_.value("arith.subi " + quotient + ", " + one + " : i32"),
                                       quotient, "i32");
    return select(by_zero, zero, floored, "i32");
  }

  // Indices outermost first, each clamped into its extent, as Halide's lowering does.
  std::string tensor_read(const expr_node& node, const std::vector<std::string>& indices) {
    const int which = captures_.tensor_index(node.name);
    const tensor_capture& declared = captures_.tensors[which];
    std::string subscripts;
    for (int d = 0; d < declared.rank; ++d) {
      const std::string last = out_.value("arith.subi " + extent_of(declared.extents[d]) + ", " + out_.i32_constant(1) + " : i32");
      const std::string below = extreme(value_kind::integer, "slt", "olt", {indices[std::size_t(d)], last});
      const std::string clamped = extreme(value_kind::integer, "sgt", "ogt", {below, out_.i32_constant(0)});
      subscripts += (d ? ", " : "") + out_.value("arith.index_cast " + clamped + " : i32 to index");
    }
    return out_.value("tensor.extract " + arguments_.tensors.at(std::size_t(which)) + "[" + subscripts + "] : " +
                      arguments_.tensor_types.at(std::size_t(which)));
  }

  std::string extent_of(const extent& e) {
    switch (e.kind) {
      case extent_kind::batch: return leaves_.batch_count;
      case extent_kind::heads: return out_.i32_constant(leaves_.heads);
      case extent_kind::query_length: return leaves_.query_length;
      case extent_kind::key_length: return leaves_.key_length;
      case extent_kind::fixed: break;
    }
    return out_.i32_constant(e.size);
  }

  ssa_writer& out_;
  const modifier_graph& graph_;
  const capture_table& captures_;
  const capture_arguments& arguments_;
  const modifier_leaves& leaves_;
};

}  // namespace

std::string emit_modifier(ssa_writer& out, const modifier_graph& graph, const capture_table& captures,
                          const capture_arguments& arguments, const modifier_leaves& leaves) {
  return modifier_emission(out, graph, captures, arguments, leaves).emit(graph.count - 1);
}

}  // namespace attngen::mlir_export
