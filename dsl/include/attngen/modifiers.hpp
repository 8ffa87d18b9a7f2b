#pragma once
/// Score and mask modifiers: small compile-time expression graphs that say *which* attention a kernel
/// computes, compiled into it (FlexAttention's score_mod and mask_mod, at build time).
///
///     using namespace attngen::mod;
///     constexpr auto doc = attngen::tensor<attngen::capture_type::i32>("doc", attngen::dim::batch,
///                                                                      attngen::dim::key_length);
///     constexpr auto packed = attngen::attention().heads(8).head_dim(128)
///         .capture(doc)
///         .mask_mod(doc(b, q) == doc(b, kv) && kv <= q);
///
/// Leaves: `score` (the scaled q.k, float), `b`, `h`, `q`, `kv` (batch, query head, query and key
/// index), `q_len`, `kv_len` (the call's lengths), number literals and `infinity`, captured run-time
/// scalars and captured run-time tensors indexed by integer expressions. Nodes (attngen/modifier_ops.hpp):
///   numbers      + - * / % (integer division and remainder round down), unary -, min, max, abs;
///   float math   exp, exp2, log, pow, sqrt, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh,
///                tanh, sigmoid, erf, floor, ceil, round (half to even), to_float;
///   integers     & | ^ ~ << >> (shift counts clamped into 0..31);
///   conditions   comparisons, && || ! (& and | on conditions are && and ||), select(c, a, b).
/// Integers mix with floats by converting to float; float math converts integers. A type error (a
/// boolean in arithmetic or float math, a float in a bit operation or &&, a float index) stops
/// compilation with an `attngen modifier:` message; an undeclared capture or a wrong number of
/// indices is a description rule (attngen::validated) and stops it too.
///
/// Semantics: score_mod(score, b, h, q, kv) replaces the scaled score before the additive mask is
/// added (a score at or below mask_out_threshold, -infinity included, masks the key out, as
/// FlexAttention's -inf does); mask_mod(b, h, q, kv) false masks the key out (on top of causality and
/// the other masks).
/// Captured tensor reads are clamped into the tensor's extents.

#include <concepts>
#include <limits>
#include <type_traits>
#include <utility>
#include <cstdint>
#include <string_view>

#include "attngen/modifier_ops.hpp"

namespace attngen {

/// A capture's name: an identifier of at most 15 characters.
struct capture_name {
  char text[16] = {};
  bool too_long = false;  ///< the given name had more than 15 characters (a description rule)

  static constexpr capture_name of(std::string_view name) {
    capture_name result;
    for (std::size_t n = 0; n < name.size() && n < 15; ++n) result.text[n] = name[n];
    result.too_long = name.size() > 15;
    return result;
  }
  constexpr std::string_view view() const {
    std::size_t n = 0;
    while (n < 16 && text[n] != '\0') ++n;
    return {text, n};
  }
  constexpr bool empty() const { return text[0] == '\0'; }

  friend constexpr bool operator==(const capture_name&, const capture_name&) = default;
};

struct expr_node {
  expr_op op = expr_op::constant;
  value_kind kind = value_kind::floating;
  std::int8_t operands[3] = {-1, -1, -1};
  std::int8_t operand_count = 0;
  float number = 0.0f;  ///< constants; integers are exact up to 2^24
  capture_name name;    ///< scalars and tensor reads

  friend constexpr bool operator==(const expr_node&, const expr_node&) = default;
};

/// A modifier: nodes in an order where every operand comes before its user; the last is the root.
struct modifier_graph {
  static constexpr int max_nodes = 40;
  expr_node nodes[max_nodes];
  int count = 0;
  bool overflow = false;  ///< more than max_nodes were needed (a description rule reports it)

  constexpr bool empty() const { return count == 0; }
  constexpr const expr_node& root() const { return nodes[count - 1]; }

  friend constexpr bool operator==(const modifier_graph&, const modifier_graph&) = default;
};

/// An expression of kind K: a graph whose root has that kind. Build it from the leaves in
/// attngen::mod and the operators and functions below.
template <value_kind K>
struct expr {
  static constexpr value_kind kind = K;
  modifier_graph graph;
};

namespace detail {

constexpr int append(modifier_graph& to, const modifier_graph& from) {
  if (to.count + from.count > modifier_graph::max_nodes) {
    to.overflow = true;
    return to.count - 1;
  }
  const int offset = to.count;
  for (int n = 0; n < from.count; ++n) {
    expr_node node = from.nodes[n];
    for (int o = 0; o < node.operand_count; ++o) node.operands[o] = std::int8_t(node.operands[o] + offset);
    to.nodes[to.count++] = node;
  }
  to.overflow = to.overflow || from.overflow;
  return to.count - 1;
}

template <value_kind K>
constexpr expr<K> leaf(expr_op op, float number = 0.0f, capture_name name = {}) {
  expr<K> e;
  e.graph.nodes[0] = expr_node{op, K, {-1, -1, -1}, 0, number, name};
  e.graph.count = 1;
  return e;
}

template <value_kind K, value_kind... Ks>
constexpr expr<K> node(expr_op op, const expr<Ks>&... operands) {
  expr<K> e;
  expr_node n{op, K, {-1, -1, -1}, std::int8_t(sizeof...(Ks)), 0.0f, {}};
  int index = 0;
  ((n.operands[index++] = std::int8_t(append(e.graph, operands.graph))), ...);
  if (e.graph.count >= modifier_graph::max_nodes) {
    e.graph.overflow = true;
    return e;
  }
  e.graph.nodes[e.graph.count++] = n;
  return e;
}

template <typename T>
struct is_expr_type : std::false_type {};
template <value_kind K>
struct is_expr_type<expr<K>> : std::true_type {};

template <typename T>
concept expression = is_expr_type<T>::value;
template <typename T>
concept number_literal = std::integral<T> || std::floating_point<T>;
template <typename T>
concept operand = expression<T> || number_literal<T>;

inline constexpr float integer_constant_limit = 16777216.0f;  ///< 2^24: floats hold every integer up to it

// An integer literal as the float a constant node stores; one beyond 2^24 would round, so it becomes
// infinity, which the rule modifier_integers_exact refuses.
template <std::integral T>
constexpr float integer_constant(T x) {
  const bool exact = std::cmp_less_equal(x, 16777216) && std::cmp_greater_equal(x, -16777216);
  return exact ? float(x) : std::numeric_limits<float>::infinity();
}

/// A literal or an expression as an expression.
template <operand T>
constexpr auto as_expr(const T& x) {
  if constexpr (expression<T>) return x;
  else if constexpr (std::same_as<T, bool>) return leaf<value_kind::boolean>(expr_op::constant, x ? 1.0f : 0.0f);
  else if constexpr (std::integral<T>) return leaf<value_kind::integer>(expr_op::constant, integer_constant(x));
  else return leaf<value_kind::floating>(expr_op::constant, float(x));
}

/// An integer expression as float (floats unchanged).
template <value_kind K>
constexpr expr<value_kind::floating> as_float(const expr<K>& e) {
  if constexpr (K == value_kind::floating) return e;
  else return node<value_kind::floating>(expr_op::to_float, e);
}

template <typename A, typename B>
constexpr auto arithmetic(expr_op op, const A& a_in, const B& b_in) {
  const auto a = as_expr(a_in);
  const auto b = as_expr(b_in);
  constexpr value_kind ka = decltype(a)::kind, kb = decltype(b)::kind;
  static_assert(ka != value_kind::boolean && kb != value_kind::boolean,
                "attngen modifier: arithmetic on a boolean expression; use select(condition, a, b)");
  if constexpr (ka == value_kind::integer && kb == value_kind::integer) return node<value_kind::integer>(op, a, b);
  else return node<value_kind::floating>(op, as_float(a), as_float(b));
}

template <typename A, typename B>
constexpr auto comparison(expr_op op, const A& a_in, const B& b_in) {
  const auto a = as_expr(a_in);
  const auto b = as_expr(b_in);
  constexpr value_kind ka = decltype(a)::kind, kb = decltype(b)::kind;
  static_assert(ka != value_kind::boolean && kb != value_kind::boolean,
                "attngen modifier: comparing a boolean expression; combine conditions with &&, || and !");
  if constexpr (ka == value_kind::integer && kb == value_kind::integer) return node<value_kind::boolean>(op, a, b);
  else return node<value_kind::boolean>(op, as_float(a), as_float(b));
}

template <typename A, typename B>
constexpr auto logic(expr_op op, const A& a_in, const B& b_in) {
  const auto a = as_expr(a_in);
  const auto b = as_expr(b_in);
  static_assert(decltype(a)::kind == value_kind::boolean && decltype(b)::kind == value_kind::boolean,
                "attngen modifier: && and || take boolean expressions (comparisons), not numbers");
  return node<value_kind::boolean>(op, a, b);
}

template <typename A>
constexpr auto float_function(expr_op op, const A& a_in) {
  const auto a = as_expr(a_in);
  static_assert(decltype(a)::kind != value_kind::boolean,
                "attngen modifier: float math (exp, log, sin, sqrt, floor, sigmoid, erf, ...) takes a number, "
                "not a boolean expression");
  return node<value_kind::floating>(op, as_float(a));
}

template <typename A, typename B>
constexpr auto float_function(expr_op op, const A& a_in, const B& b_in) {
  const auto a = as_expr(a_in);
  const auto b = as_expr(b_in);
  static_assert(decltype(a)::kind != value_kind::boolean && decltype(b)::kind != value_kind::boolean,
                "attngen modifier: pow and atan2 take numbers, not boolean expressions");
  return node<value_kind::floating>(op, as_float(a), as_float(b));
}

template <typename... Operands>
constexpr auto bitwise(expr_op op, const Operands&... operands_in) {
  static_assert(((decltype(as_expr(operands_in))::kind == value_kind::integer) && ...),
                "attngen modifier: bit operations (& | ^ ~ << >>) take integer expressions, not floats or booleans");
  return node<value_kind::integer>(op, as_expr(operands_in)...);
}

// & and | on two conditions are && and || (FlexAttention's masks combine conditions with them).
template <typename A, typename B>
constexpr auto bitwise_or_logic(expr_op bit_op, expr_op logic_op, const A& a, const B& b) {
  if constexpr (decltype(as_expr(a))::kind == value_kind::boolean && decltype(as_expr(b))::kind == value_kind::boolean)
    return logic(logic_op, a, b);
  else return bitwise(bit_op, a, b);
}

// Two operands, at least one an expression (so plain arithmetic on literals stays C++'s).
template <typename A, typename B>
concept operands = operand<A> && operand<B> && (expression<A> || expression<B>);

}  // namespace detail

// Operators: numbers give numbers (integer when both are), comparisons give booleans.
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator+(const A& a, const B& b) { return detail::arithmetic(expr_op::add, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator-(const A& a, const B& b) { return detail::arithmetic(expr_op::sub, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator*(const A& a, const B& b) { return detail::arithmetic(expr_op::mul, a, b); }
/// Division; between integers it rounds down (towards negative infinity).
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator/(const A& a, const B& b) { return detail::arithmetic(expr_op::div, a, b); }
/// Remainder of the division that rounds down: a - b * (a / b), with the divisor's sign (Python's
/// and torch.remainder's); an integer x % 0 is x, a float one NaN.
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator%(const A& a, const B& b) { return detail::arithmetic(expr_op::modulo, a, b); }
template <value_kind K>
constexpr expr<K> operator-(const expr<K>& a) {
  static_assert(K != value_kind::boolean, "attngen modifier: negating a boolean expression; use !");
  return detail::node<K>(expr_op::neg, a);
}
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator<(const A& a, const B& b) { return detail::comparison(expr_op::lt, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator<=(const A& a, const B& b) { return detail::comparison(expr_op::le, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator>(const A& a, const B& b) { return detail::comparison(expr_op::gt, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator>=(const A& a, const B& b) { return detail::comparison(expr_op::ge, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator==(const A& a, const B& b) { return detail::comparison(expr_op::eq, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator!=(const A& a, const B& b) { return detail::comparison(expr_op::ne, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator&&(const A& a, const B& b) { return detail::logic(expr_op::logical_and, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator||(const A& a, const B& b) { return detail::logic(expr_op::logical_or, a, b); }
template <value_kind K>
constexpr auto operator!(const expr<K>& a) {
  static_assert(K == value_kind::boolean, "attngen modifier: ! takes a boolean expression (a comparison)");
  return detail::node<value_kind::boolean>(expr_op::logical_not, a);
}

/// Bit operations on integers (two's complement, 32 bits); on two conditions & and | are && and ||.
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator&(const A& a, const B& b) {
  return detail::bitwise_or_logic(expr_op::bit_and, expr_op::logical_and, a, b);
}
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator|(const A& a, const B& b) {
  return detail::bitwise_or_logic(expr_op::bit_or, expr_op::logical_or, a, b);
}
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator^(const A& a, const B& b) { return detail::bitwise(expr_op::bit_xor, a, b); }
template <value_kind K>
constexpr auto operator~(const expr<K>& a) { return detail::bitwise(expr_op::bit_not, a); }
/// Shifts by a count clamped into 0..31; << wraps, >> is arithmetic (rounds down).
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator<<(const A& a, const B& b) { return detail::bitwise(expr_op::shift_left, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto operator>>(const A& a, const B& b) { return detail::bitwise(expr_op::shift_right, a, b); }

namespace mod {

/// The scaled score q.k * scale (score_mod only).
inline constexpr auto score = detail::leaf<value_kind::floating>(expr_op::score);
inline constexpr auto b = detail::leaf<value_kind::integer>(expr_op::batch);   ///< batch index
inline constexpr auto h = detail::leaf<value_kind::integer>(expr_op::head);    ///< query head
inline constexpr auto q = detail::leaf<value_kind::integer>(expr_op::query);   ///< query index
inline constexpr auto kv = detail::leaf<value_kind::integer>(expr_op::key);    ///< key index
inline constexpr auto q_len = detail::leaf<value_kind::integer>(expr_op::query_length);  ///< Lq
inline constexpr auto kv_len = detail::leaf<value_kind::integer>(expr_op::key_length);   ///< Lk
/// Positive infinity: `select(condition, score, -infinity)` hides a key as FlexAttention's -inf does.
inline constexpr auto infinity =
    detail::leaf<value_kind::floating>(expr_op::constant, std::numeric_limits<float>::infinity());

/// `then` where `condition` holds, else `otherwise` (numbers; mixed integer and float give float).
template <typename C, typename T, typename E>
  requires detail::operand<C> && detail::operand<T> && detail::operand<E>
constexpr auto select(const C& condition_in, const T& then_in, const E& otherwise_in) {
  const auto condition = detail::as_expr(condition_in);
  const auto then = detail::as_expr(then_in);
  const auto otherwise = detail::as_expr(otherwise_in);
  static_assert(decltype(condition)::kind == value_kind::boolean,
                "attngen modifier: select's first argument must be a boolean expression (a comparison)");
  constexpr value_kind kt = decltype(then)::kind, ke = decltype(otherwise)::kind;
  if constexpr (kt == ke) return detail::node<kt>(expr_op::select, condition, then, otherwise);
  else {
    static_assert(kt != value_kind::boolean && ke != value_kind::boolean,
                  "attngen modifier: select mixes a boolean and a number");
    return detail::node<value_kind::floating>(expr_op::select, condition, detail::as_float(then),
                                              detail::as_float(otherwise));
  }
}
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto min(const A& a, const B& b) { return detail::arithmetic(expr_op::min, a, b); }
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto max(const A& a, const B& b) { return detail::arithmetic(expr_op::max, a, b); }
template <value_kind K>
constexpr expr<K> abs(const expr<K>& a) {
  static_assert(K != value_kind::boolean, "attngen modifier: abs takes a number, not a boolean expression");
  return detail::node<K>(expr_op::abs, a);
}
template <value_kind K>
constexpr auto exp(const expr<K>& a) { return detail::float_function(expr_op::exp, a); }
template <value_kind K>
constexpr auto exp2(const expr<K>& a) { return detail::float_function(expr_op::exp2, a); }
template <value_kind K>
constexpr auto log(const expr<K>& a) { return detail::float_function(expr_op::log, a); }
template <value_kind K>
constexpr auto sqrt(const expr<K>& a) { return detail::float_function(expr_op::sqrt, a); }
template <value_kind K>
constexpr auto sin(const expr<K>& a) { return detail::float_function(expr_op::sin, a); }
template <value_kind K>
constexpr auto cos(const expr<K>& a) { return detail::float_function(expr_op::cos, a); }
template <value_kind K>
constexpr auto tan(const expr<K>& a) { return detail::float_function(expr_op::tan, a); }
template <value_kind K>
constexpr auto asin(const expr<K>& a) { return detail::float_function(expr_op::asin, a); }
template <value_kind K>
constexpr auto acos(const expr<K>& a) { return detail::float_function(expr_op::acos, a); }
template <value_kind K>
constexpr auto atan(const expr<K>& a) { return detail::float_function(expr_op::atan, a); }
template <value_kind K>
constexpr auto sinh(const expr<K>& a) { return detail::float_function(expr_op::sinh, a); }
template <value_kind K>
constexpr auto cosh(const expr<K>& a) { return detail::float_function(expr_op::cosh, a); }
template <value_kind K>
constexpr auto tanh(const expr<K>& a) { return detail::float_function(expr_op::tanh, a); }
template <value_kind K>
constexpr auto erf(const expr<K>& a) { return detail::float_function(expr_op::erf, a); }
template <value_kind K>
constexpr auto floor(const expr<K>& a) { return detail::float_function(expr_op::floor, a); }
template <value_kind K>
constexpr auto ceil(const expr<K>& a) { return detail::float_function(expr_op::ceil, a); }
/// The nearest whole number, halves to even (torch.round).
template <value_kind K>
constexpr auto round(const expr<K>& a) { return detail::float_function(expr_op::round, a); }
/// 1 / (1 + exp(-a)).
template <value_kind K>
constexpr auto sigmoid(const expr<K>& a) { return detail::float_function(expr_op::sigmoid, a); }
/// a raised to the power b (a negative a with a whole b as well).
template <typename A, typename B> requires detail::operands<A, B>
constexpr auto pow(const A& a, const B& b) { return detail::float_function(expr_op::pow, a, b); }
/// The angle of the point (x, y), in -pi..pi.
template <typename Y, typename X> requires detail::operands<Y, X>
constexpr auto atan2(const Y& y, const X& x) { return detail::float_function(expr_op::atan2, y, x); }
template <value_kind K>
constexpr auto to_float(const expr<K>& a) {
  static_assert(K != value_kind::boolean, "attngen modifier: to_float takes a number, not a boolean expression");
  return detail::as_float(a);
}

}  // namespace mod

/// Element type of a captured tensor.
enum class capture_type : std::uint8_t { f32, i32 };

/// What a captured tensor's dimension must equal at run time.
enum class extent_kind : std::uint8_t { fixed, batch, heads, query_length, key_length };
struct extent {
  extent_kind kind = extent_kind::fixed;
  int size = 0;  ///< with extent_kind::fixed

  static constexpr extent fixed(int n) { return {extent_kind::fixed, n}; }
  friend constexpr bool operator==(const extent&, const extent&) = default;
};
namespace dim {
inline constexpr extent batch{extent_kind::batch};
inline constexpr extent heads{extent_kind::heads};
inline constexpr extent query_length{extent_kind::query_length};
inline constexpr extent key_length{extent_kind::key_length};
constexpr extent fixed(int n) { return extent::fixed(n); }
}  // namespace dim

/// A captured tensor's declaration as the description records it.
struct tensor_capture {
  static constexpr int max_rank = 3;
  capture_name name;
  capture_type type = capture_type::f32;
  int rank = 0;
  extent extents[max_rank];

  friend constexpr bool operator==(const tensor_capture&, const tensor_capture&) = default;
};

/// A run-time tensor a modifier reads, declared in the description with .capture(t) and passed in
/// attention_args::captures in declaration order. Read it as t(i, j, ...) with integer indices:
/// f32 tensors give float expressions, i32 tensors integer ones.
template <capture_type T>
struct captured_tensor {
  tensor_capture declaration;

  template <typename... Indices>
    requires(detail::operand<Indices> && ...)
  constexpr auto operator()(const Indices&... indices) const {
    static_assert(sizeof...(Indices) >= 1 && sizeof...(Indices) <= tensor_capture::max_rank,
                  "attngen modifier: a captured tensor takes 1 to 3 indices");
    static_assert(((decltype(detail::as_expr(indices))::kind == value_kind::integer) && ...),
                  "attngen modifier: tensor indices must be integer expressions (b, h, q, kv, integer literals)");
    constexpr value_kind kind = T == capture_type::i32 ? value_kind::integer : value_kind::floating;
    expr<kind> e = detail::node<kind>(expr_op::tensor_read, detail::as_expr(indices)...);
    if (!e.graph.overflow) e.graph.nodes[e.graph.count - 1].name = declaration.name;
    return e;
  }
};

/// A run-time float a modifier reads, declared with .capture(s), passed in attention_args::scalars in
/// declaration order. Use it as s() in expressions.
struct scalar_capture {
  capture_name name;
  constexpr expr<value_kind::floating> operator()() const {
    return detail::leaf<value_kind::floating>(expr_op::scalar, 0.0f, name);
  }
  friend constexpr bool operator==(const scalar_capture&, const scalar_capture&) = default;
};

/// Declares a captured tensor: its name, element type and extents (outermost first, 1 to 3).
template <capture_type T, typename... Extents>
  requires(std::same_as<Extents, extent> && ...)
constexpr captured_tensor<T> tensor(std::string_view name, Extents... extents) {
  static_assert(sizeof...(Extents) >= 1 && sizeof...(Extents) <= tensor_capture::max_rank,
                "attngen: a captured tensor has 1 to 3 dimensions");
  captured_tensor<T> t;
  t.declaration.name = capture_name::of(name);
  t.declaration.type = T;
  t.declaration.rank = int(sizeof...(Extents));
  int n = 0;
  ((t.declaration.extents[n++] = extents), ...);
  return t;
}

/// Declares a captured run-time scalar.
constexpr scalar_capture scalar(std::string_view name) { return {capture_name::of(name)}; }

/// The captures a description declares (see attention_desc::capture).
struct capture_table {
  static constexpr int max_tensors = 4;
  static constexpr int max_scalars = 4;
  tensor_capture tensors[max_tensors];
  int tensor_count = 0;
  capture_name scalars[max_scalars];
  int scalar_count = 0;
  bool overflow = false;

  /// Index of the tensor (scalar) called `name`, or -1.
  constexpr int tensor_index(const capture_name& name) const {
    for (int n = 0; n < tensor_count; ++n)
      if (tensors[n].name.view() == name.view()) return n;
    return -1;
  }
  constexpr int scalar_index(const capture_name& name) const {
    for (int n = 0; n < scalar_count; ++n)
      if (scalars[n].view() == name.view()) return n;
    return -1;
  }
  constexpr bool empty() const { return tensor_count == 0 && scalar_count == 0; }

  friend constexpr bool operator==(const capture_table&, const capture_table&) = default;
};

namespace detail {

constexpr bool reads(const modifier_graph& g, expr_op op) {
  for (int n = 0; n < g.count; ++n)
    if (g.nodes[n].op == op) return true;
  return false;
}

// Integer constants are stored as floats, which hold every integer up to 2^24 exactly.
constexpr bool integer_constants_exact(const modifier_graph& g) {
  for (int n = 0; n < g.count; ++n) {
    const expr_node& node = g.nodes[n];
    if (node.op == expr_op::constant && node.kind == value_kind::integer &&
        !(node.number >= -integer_constant_limit && node.number <= integer_constant_limit))
      return false;
  }
  return true;
}

constexpr bool reads_only_declared_captures(const modifier_graph& g, const capture_table& c) {
  for (int n = 0; n < g.count; ++n) {
    const expr_node& node = g.nodes[n];
    if (node.op == expr_op::scalar && c.scalar_index(node.name) < 0) return false;
    if (node.op == expr_op::tensor_read && c.tensor_index(node.name) < 0) return false;
  }
  return true;
}

constexpr bool reads_tensors_at_their_rank(const modifier_graph& g, const capture_table& c) {
  for (int n = 0; n < g.count; ++n) {
    const expr_node& node = g.nodes[n];
    if (node.op != expr_op::tensor_read) continue;
    const int index = c.tensor_index(node.name);
    if (index >= 0 && c.tensors[index].rank != node.operand_count) return false;
  }
  return true;
}

constexpr bool is_identifier(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t n = 0; n < name.size(); ++n) {
    const char c = name[n];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(n > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

constexpr bool capture_names_valid(const capture_table& c) {
  auto valid = [](const capture_name& name) { return !name.too_long && is_identifier(name.view()); };
  for (int n = 0; n < c.tensor_count; ++n) {
    if (!valid(c.tensors[n].name)) return false;
    for (int m = 0; m < n; ++m)
      if (c.tensors[m].name.view() == c.tensors[n].name.view()) return false;
  }
  for (int n = 0; n < c.scalar_count; ++n) {
    if (!valid(c.scalars[n]) || c.tensor_index(c.scalars[n]) >= 0) return false;
    for (int m = 0; m < n; ++m)
      if (c.scalars[m].view() == c.scalars[n].view()) return false;
  }
  return true;
}

/// Whether no captured tensor or scalar is named like a backward pass's gradient: d_... (d_output,
/// d_<capture>, d_scalars), dq, dk or dv.
constexpr bool capture_names_apart_from_gradients(const capture_table& c) {
  auto gradient_like = [](std::string_view name) {
    return name.substr(0, 2) == "d_" || name == "dq" || name == "dk" || name == "dv";
  };
  for (int n = 0; n < c.tensor_count; ++n)
    if (gradient_like(c.tensors[n].name.view())) return false;
  for (int n = 0; n < c.scalar_count; ++n)
    if (gradient_like(c.scalars[n].view())) return false;
  return true;
}

/// Whether a captured tensor has a query_length extent.
constexpr bool captures_span_queries(const capture_table& c) {
  for (int n = 0; n < c.tensor_count; ++n)
    for (int d = 0; d < c.tensors[n].rank; ++d)
      if (c.tensors[n].extents[d].kind == extent_kind::query_length) return true;
  return false;
}

constexpr bool capture_extents_valid(const capture_table& c) {
  for (int n = 0; n < c.tensor_count; ++n)
    for (int d = 0; d < c.tensors[n].rank; ++d)
      if (c.tensors[n].extents[d].kind == extent_kind::fixed && c.tensors[n].extents[d].size < 1) return false;
  return true;
}

}  // namespace detail

}  // namespace attngen
