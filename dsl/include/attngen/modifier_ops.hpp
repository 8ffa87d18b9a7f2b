#pragma once
/// The modifier language's node kinds, each with its one row of facts: its text-form name, its C++
/// spelling, its operand count and the rule that types its operands. The C++ operators
/// (attngen/modifiers.hpp), the text form (attngen/modifier_text_format.hpp) and the lowerings all
/// read this table; a new node kind is a row here and a case in each lowering.

#include <cstdint>
#include <string_view>

namespace attngen {

/// What an expression evaluates to.
enum class value_kind : std::uint8_t { floating, integer, boolean };

/// Node kinds of a modifier graph.
enum class expr_op : std::uint8_t {
  constant,       ///< `number` (its kind says float, integer or boolean; floats may be infinite)
  score, batch, head, query, key, query_length, key_length,
  scalar,         ///< the captured run-time scalar `name`
  tensor_read,    ///< the captured tensor `name` at operands (1 to 3 integer indices)
  add, sub, mul, div, modulo, neg, min, max, abs,
  exp, log, tanh, sin, cos, tan, asin, acos, atan, sinh, cosh, exp2, sqrt, floor, ceil, round, sigmoid, erf,
  pow, atan2,
  to_float,
  bit_and, bit_or, bit_xor, bit_not, shift_left, shift_right,
  lt, le, gt, ge, eq, ne, logical_and, logical_or, logical_not,
  select,         ///< operands: condition, then, else
};

/// How a node kind types its operands and what it yields.
enum class typing : std::uint8_t {
  float_leaf,    ///< score
  integer_leaf,  ///< b h q kv q_len kv_len
  declared,      ///< constants, scalars and tensor reads: the kind their value or declaration gives
  numbers,       ///< numbers; integers give an integer, else float (+ - * / % min max)
  number,        ///< a number; its own kind (neg, abs)
  float_math,    ///< numbers (integers converted); float (exp ... erf, pow, atan2)
  integers,      ///< integers; integer (& | ^ ~ << >>)
  conversion,    ///< an integer; float (to_float)
  comparison,    ///< two numbers of one kind; boolean
  booleans,      ///< booleans; boolean (&& || !)
  selection,     ///< a boolean and two values of one kind; their kind
};

struct op_info {
  expr_op op;
  std::string_view text;  ///< the text form's name (prefix calls)
  std::string_view cpp;   ///< C++: an infix operator (with a leading space), a prefix operator or a function
  int arity;
  typing rule;
};

inline constexpr op_info op_table[] = {
    {expr_op::constant, "", "", 0, typing::declared},
    {expr_op::score, "score", "attngen::mod::score", 0, typing::float_leaf},
    {expr_op::batch, "b", "attngen::mod::b", 0, typing::integer_leaf},
    {expr_op::head, "h", "attngen::mod::h", 0, typing::integer_leaf},
    {expr_op::query, "q", "attngen::mod::q", 0, typing::integer_leaf},
    {expr_op::key, "kv", "attngen::mod::kv", 0, typing::integer_leaf},
    {expr_op::query_length, "q_len", "attngen::mod::q_len", 0, typing::integer_leaf},
    {expr_op::key_length, "kv_len", "attngen::mod::kv_len", 0, typing::integer_leaf},
    {expr_op::scalar, "$", "", 0, typing::declared},
    {expr_op::tensor_read, "@", "", -1, typing::declared},
    {expr_op::add, "add", " +", 2, typing::numbers},
    {expr_op::sub, "sub", " -", 2, typing::numbers},
    {expr_op::mul, "mul", " *", 2, typing::numbers},
    {expr_op::div, "div", " /", 2, typing::numbers},
    {expr_op::modulo, "mod", " %", 2, typing::numbers},
    {expr_op::neg, "neg", "-", 1, typing::number},
    {expr_op::min, "min", "attngen::mod::min", 2, typing::numbers},
    {expr_op::max, "max", "attngen::mod::max", 2, typing::numbers},
    {expr_op::abs, "abs", "attngen::mod::abs", 1, typing::number},
    {expr_op::exp, "exp", "attngen::mod::exp", 1, typing::float_math},
    {expr_op::log, "log", "attngen::mod::log", 1, typing::float_math},
    {expr_op::tanh, "tanh", "attngen::mod::tanh", 1, typing::float_math},
    {expr_op::sin, "sin", "attngen::mod::sin", 1, typing::float_math},
    {expr_op::cos, "cos", "attngen::mod::cos", 1, typing::float_math},
    {expr_op::tan, "tan", "attngen::mod::tan", 1, typing::float_math},
    {expr_op::asin, "asin", "attngen::mod::asin", 1, typing::float_math},
    {expr_op::acos, "acos", "attngen::mod::acos", 1, typing::float_math},
    {expr_op::atan, "atan", "attngen::mod::atan", 1, typing::float_math},
    {expr_op::sinh, "sinh", "attngen::mod::sinh", 1, typing::float_math},
    {expr_op::cosh, "cosh", "attngen::mod::cosh", 1, typing::float_math},
    {expr_op::exp2, "exp2", "attngen::mod::exp2", 1, typing::float_math},
    {expr_op::sqrt, "sqrt", "attngen::mod::sqrt", 1, typing::float_math},
    {expr_op::floor, "floor", "attngen::mod::floor", 1, typing::float_math},
    {expr_op::ceil, "ceil", "attngen::mod::ceil", 1, typing::float_math},
    {expr_op::round, "round", "attngen::mod::round", 1, typing::float_math},
    {expr_op::sigmoid, "sigmoid", "attngen::mod::sigmoid", 1, typing::float_math},
    {expr_op::erf, "erf", "attngen::mod::erf", 1, typing::float_math},
    {expr_op::pow, "pow", "attngen::mod::pow", 2, typing::float_math},
    {expr_op::atan2, "atan2", "attngen::mod::atan2", 2, typing::float_math},
    {expr_op::to_float, "to_float", "attngen::mod::to_float", 1, typing::conversion},
    {expr_op::bit_and, "bit_and", " &", 2, typing::integers},
    {expr_op::bit_or, "bit_or", " |", 2, typing::integers},
    {expr_op::bit_xor, "bit_xor", " ^", 2, typing::integers},
    {expr_op::bit_not, "bit_not", "~", 1, typing::integers},
    {expr_op::shift_left, "shl", " <<", 2, typing::integers},
    {expr_op::shift_right, "shr", " >>", 2, typing::integers},
    {expr_op::lt, "lt", " <", 2, typing::comparison},
    {expr_op::le, "le", " <=", 2, typing::comparison},
    {expr_op::gt, "gt", " >", 2, typing::comparison},
    {expr_op::ge, "ge", " >=", 2, typing::comparison},
    {expr_op::eq, "eq", " ==", 2, typing::comparison},
    {expr_op::ne, "ne", " !=", 2, typing::comparison},
    {expr_op::logical_and, "and", " &&", 2, typing::booleans},
    {expr_op::logical_or, "or", " ||", 2, typing::booleans},
    {expr_op::logical_not, "not", "!", 1, typing::booleans},
    {expr_op::select, "select", "attngen::mod::select", 3, typing::selection},
};

/// Whether the table has one row per node kind, in the enum's order (checked below).
constexpr bool op_table_complete() {
  int n = 0;
  for (const op_info& row : op_table)
    if (int(row.op) != n++) return false;
  return n == int(expr_op::select) + 1;
}
static_assert(op_table_complete(), "attngen: op_table needs one row per expr_op, in the enum's order");

/// The table's row of `op`.
constexpr const op_info& info(expr_op op) { return op_table[static_cast<int>(op)]; }

}  // namespace attngen
