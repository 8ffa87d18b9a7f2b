#pragma once
/// Modifier graphs and captures as text (the description's text form) and as C++ (generated headers).
///
/// Text: prefix form, e.g. `mul(to_float(sub(kv, q)), 0.5f)`. Integers are plain (`3`, `-1`), floats
/// end in `f` (`0.5f`, `1e-05f`), booleans are `true`/`false`; the leaves are score b h q kv q_len
/// kv_len; `$cap` reads the scalar cap and `@doc(b, q)` the tensor doc. A capture line reads
/// `tensor = doc i32 batch key_length` (extents: batch, heads, query_length, key_length or a number)
/// or `scalar = cap`.

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>

#include "attngen/modifiers.hpp"

namespace attngen {

namespace detail {

inline std::string constant_text(const expr_node& n, bool for_cpp) {
  if (n.kind == value_kind::boolean) return n.number != 0.0f ? "true" : "false";
  const bool infinite = n.number > std::numeric_limits<float>::max() || n.number < -std::numeric_limits<float>::max();
  if (for_cpp && infinite)
    return std::string("attngen::detail::as_expr(") + (n.number < 0 ? "-" : "") + "std::numeric_limits<float>::infinity())";
  char buffer[64];
  if (n.kind == value_kind::integer) std::snprintf(buffer, sizeof buffer, "%d", static_cast<int>(n.number));
  else std::snprintf(buffer, sizeof buffer, for_cpp ? "%af" : "%.9gf", static_cast<double>(n.number));
  return buffer;
}

inline void append_text(const modifier_graph& g, int index, std::string& out) {
  const expr_node& n = g.nodes[index];
  if (n.op == expr_op::constant) {
    out += constant_text(n, false);
    return;
  }
  if (n.op == expr_op::scalar) {
    out += "$" + std::string(n.name.view());
    return;
  }
  out += n.op == expr_op::tensor_read ? "@" + std::string(n.name.view()) : std::string(info(n.op).text);
  if (n.operand_count == 0) return;
  out += "(";
  for (int o = 0; o < n.operand_count; ++o) {
    if (o > 0) out += ", ";
    append_text(g, n.operands[o], out);
  }
  out += ")";
}

inline std::string_view extent_text(extent e) {
  switch (e.kind) {
    case extent_kind::batch: return "batch";
    case extent_kind::heads: return "heads";
    case extent_kind::query_length: return "query_length";
    case extent_kind::key_length: return "key_length";
    case extent_kind::fixed: break;
  }
  return "";
}

inline std::string declaration_cpp(const tensor_capture& t) {
  std::string cpp = std::string("attngen::tensor<attngen::capture_type::") +
                    (t.type == capture_type::i32 ? "i32" : "f32") + ">(\"" + std::string(t.name.view()) + "\"";
  for (int d = 0; d < t.rank; ++d)
    cpp += t.extents[d].kind == extent_kind::fixed ? ", attngen::dim::fixed(" + std::to_string(t.extents[d].size) + ")"
                                                   : ", attngen::dim::" + std::string(extent_text(t.extents[d]));
  return cpp + ")";
}

inline void append_cpp(const modifier_graph& g, const capture_table& captures, int index, std::string& out) {
  const expr_node& n = g.nodes[index];
  auto operand = [&](int o) { append_cpp(g, captures, n.operands[o], out); };
  switch (n.op) {
    case expr_op::constant: out += constant_text(n, true); return;
    case expr_op::scalar: out += "attngen::scalar(\"" + std::string(n.name.view()) + "\")()"; return;
    case expr_op::tensor_read: {
      const int t = captures.tensor_index(n.name);
      out += t >= 0 ? declaration_cpp(captures.tensors[t]) : "undeclared_" + std::string(n.name.view());
      out += "(";
      for (int o = 0; o < n.operand_count; ++o) {
        if (o > 0) out += ", ";
        operand(o);
      }
      out += ")";
      return;
    }
    default: break;
  }
  const op_info& s = info(n.op);
  if (n.operand_count == 0) {
    out += s.cpp;
  } else if (s.cpp.front() == ' ') {
    // Infix: an operand pair of two literals is made an expression, so C++ does not fold it.
    const bool literals = g.nodes[n.operands[0]].op == expr_op::constant && g.nodes[n.operands[1]].op == expr_op::constant;
    out += literals ? "(attngen::detail::as_expr(" : "(";
    operand(0);
    out += literals ? ")" : "";
    out += std::string(s.cpp) + " ";
    operand(1);
    out += ")";
  } else if (s.cpp.size() == 1) {  // a prefix operator: - ! ~
    out += "(" + std::string(s.cpp);
    operand(0);
    out += ")";
  } else {
    out += std::string(s.cpp) + "(";
    for (int o = 0; o < n.operand_count; ++o) {
      if (o > 0) out += ", ";
      operand(o);
    }
    out += ")";
  }
}

// A recursive-descent parser of the prefix form, appending nodes operands first.
class modifier_parser {
 public:
  modifier_parser(std::string_view text, const capture_table& captures, modifier_graph& graph)
      : text_(text), captures_(captures), graph_(graph) {}

  // Empty on success, otherwise what is wrong; error_at() says where.
  std::string parse() {
    graph_ = modifier_graph{};
    if (parse_node() < 0) return error_;
    skip_spaces();
    if (at_ < text_.size()) return fail("unexpected `" + std::string(text_.substr(at_, 1)) + "`");
    if (graph_.overflow) return "the expression has more than 40 nodes";
    return {};
  }

  // Offset in the expression of the first error.
  std::size_t error_at() const { return error_at_; }

 private:
  // Records why the parse stops (the first reason only); false, for checks that read `ok || reject(...)`.
  bool reject(const std::string& why) {
    fail(why);
    return false;
  }
  std::string fail(const std::string& why) {
    if (error_.empty()) {
      error_ = why;
      error_at_ = at_;
    }
    return error_;
  }
  void skip_spaces() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  std::string_view word() {
    skip_spaces();
    const std::size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_' ||
                                  text_[at_] == '.' || text_[at_] == '-' || text_[at_] == '+'))
      ++at_;
    return text_.substr(start, at_ - start);
  }
  int add(expr_node node) {
    if (graph_.count == modifier_graph::max_nodes) {
      graph_.overflow = true;
      return graph_.count - 1;
    }
    graph_.nodes[graph_.count] = node;
    return graph_.count++;
  }
  bool expect(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    fail(std::string("expected `") + c + "`");
    return false;
  }
  // Operands in parentheses, returning their count (or -1).
  int parse_operands(expr_node& node) {
    if (!expect('(')) return -1;
    int count = 0;
    for (;;) {
      if (count == 3) {
        fail("too many operands");
        return -1;
      }
      const int operand = parse_node();
      if (operand < 0) return -1;
      node.operands[count++] = std::int8_t(operand);
      skip_spaces();
      if (at_ < text_.size() && text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (!expect(')')) return -1;
      node.operand_count = std::int8_t(count);
      return count;
    }
  }
  int parse_node() {
    skip_spaces();
    if (at_ < text_.size() && (text_[at_] == '$' || text_[at_] == '@')) {
      const bool is_tensor = text_[at_++] == '@';
      const std::string_view name = word();
      if (!is_identifier(name)) {
        fail("expected a capture's name");
        return -1;
      }
      expr_node node{is_tensor ? expr_op::tensor_read : expr_op::scalar, value_kind::floating};
      node.name = capture_name::of(name);
      if (is_tensor) {
        const int t = captures_.tensor_index(node.name);
        if (t < 0) {
          fail("tensor `" + std::string(name) + "` is not declared (a `tensor =` line before it)");
          return -1;
        }
        node.kind = captures_.tensors[t].type == capture_type::i32 ? value_kind::integer : value_kind::floating;
        if (parse_operands(node) < 0) return -1;
      }
      return add(node);
    }
    const std::string_view w = word();
    if (w.empty()) {
      fail("expected an expression");
      return -1;
    }
    expr_node node;
    if (w == "true" || w == "false") {
      node.kind = value_kind::boolean;
      node.number = w == "true" ? 1.0f : 0.0f;
      return add(node);
    }
    if (std::isdigit(static_cast<unsigned char>(w.front())) || w.front() == '-' || w.front() == '.' || w == "inff") {
      const bool is_float = w.back() == 'f';
      const std::string number(is_float ? w.substr(0, w.size() - 1) : w);
      char* end = nullptr;
      node.number = is_float ? std::strtof(number.c_str(), &end)
                             : detail::integer_constant(std::strtoll(number.c_str(), &end, 10));
      if (end != number.c_str() + number.size()) {
        fail("bad number `" + std::string(w) + "`");
        return -1;
      }
      node.kind = is_float ? value_kind::floating : value_kind::integer;
      return add(node);
    }
    const op_info* row = nullptr;
    for (const op_info& r : op_table)
      if (r.arity >= 0 && r.text == w) row = &r;
    if (row == nullptr) {
      fail("unknown name `" + std::string(w) + "`");
      return -1;
    }
    node.op = row->op;
    if (row->arity > 0 && parse_operands(node) < 0) return -1;
    if (!set_kind(node)) return -1;
    return add(node);
  }
  // The node's kind from its operands, checking them by the node's typing rule as the C++ operators
  // do (except that the text form converts nothing: integers become floats through to_float).
  bool set_kind(expr_node& node) {
    const op_info& row = info(node.op);
    auto kind = [&](int o) { return graph_.nodes[node.operands[o]].kind; };
    auto all = [&](value_kind k) {
      for (int o = 0; o < node.operand_count; ++o)
        if (kind(o) != k) return false;
      return true;
    };
    if (row.arity > 0 && node.operand_count != row.arity)
      return reject(std::string(row.text) + " takes " + std::to_string(row.arity) + (row.arity == 1 ? " operand" : " operands"));
    switch (row.rule) {
      case typing::float_leaf: node.kind = value_kind::floating; return true;
      case typing::integer_leaf: node.kind = value_kind::integer; return true;
      case typing::declared: return true;
      case typing::numbers:
        node.kind = kind(0);
        return (kind(0) != value_kind::boolean && all(kind(0))) || reject("operands must be two integers or two floats");
      case typing::number:
        node.kind = kind(0);
        return kind(0) != value_kind::boolean || reject("operand must be a number");
      case typing::float_math:
        node.kind = value_kind::floating;
        return all(value_kind::floating) ||
               reject(row.arity == 1 ? "operand must be a float" : "operands must be floats");
      case typing::integers:
        node.kind = value_kind::integer;
        return all(value_kind::integer) ||
               reject(row.arity == 1 ? "operand must be an integer" : "operands must be integers");
      case typing::conversion:
        node.kind = value_kind::floating;
        return kind(0) == value_kind::integer || reject("operand must be an integer");
      case typing::comparison:
        node.kind = value_kind::boolean;
        return (kind(0) != value_kind::boolean && all(kind(0))) || reject("comparisons take two integers or two floats");
      case typing::booleans:
        node.kind = value_kind::boolean;
        return all(value_kind::boolean) || reject(row.arity == 1 ? "operand must be a boolean" : "operands must be booleans");
      case typing::selection:
        node.kind = kind(1);
        return (kind(0) == value_kind::boolean && kind(1) == kind(2)) ||
               reject("select takes a boolean and two values of one kind");
    }
    return true;
  }

  std::string_view text_;
  const capture_table& captures_;
  modifier_graph& graph_;
  std::size_t at_ = 0;
  std::string error_;
  std::size_t error_at_ = 0;
};

}  // namespace detail

/// The prefix text form of a modifier.
inline std::string to_text(const modifier_graph& g) {
  std::string out;
  if (!g.empty()) detail::append_text(g, g.count - 1, out);
  return out;
}

/// The C++ expression that builds the same modifier with the DSL.
inline std::string to_cpp(const modifier_graph& g, const capture_table& captures) {
  std::string out;
  if (!g.empty()) detail::append_cpp(g, captures, g.count - 1, out);
  return out;
}

/// Parses the prefix form into `graph`; returns an empty string, or what is wrong, and sets
/// `*error_at` to its offset in `text`. Tensor reads take their kind from `captures` (declared before).
inline std::string parse_modifier(std::string_view text, const capture_table& captures, modifier_graph& graph,
                                  std::size_t* error_at) {
  detail::modifier_parser parser(text, captures, graph);
  std::string why = parser.parse();
  if (!why.empty()) *error_at = parser.error_at();
  return why;
}

/// `doc i32 batch key_length`: a tensor declaration's text form.
inline std::string to_text(const tensor_capture& t) {
  std::string text = std::string(t.name.view()) + (t.type == capture_type::i32 ? " i32" : " f32");
  for (int d = 0; d < t.rank; ++d)
    text += " " + (t.extents[d].kind == extent_kind::fixed ? std::to_string(t.extents[d].size)
                                                          : std::string(detail::extent_text(t.extents[d])));
  return text;
}

/// Parses a tensor declaration's text form; returns an empty string or what is wrong.
inline std::string parse_tensor_capture(std::string_view text, tensor_capture& t) {
  t = tensor_capture{};
  std::string words[2 + tensor_capture::max_rank];  // name, type, extents
  int count = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) {
      if (count == int(std::size(words)))
        return "a tensor has at most " + std::to_string(tensor_capture::max_rank) + " extents";
      words[count++] = std::string(text.substr(at, end - at));
    }
    at = end + 1;
  }
  if (count < 3) return "expected `name type extent...`, e.g. `doc i32 batch key_length`";
  t.name = capture_name::of(words[0]);
  if (words[1] != "i32" && words[1] != "f32") return "tensor type must be i32 or f32, not `" + words[1] + "`";
  t.type = words[1] == "i32" ? capture_type::i32 : capture_type::f32;
  t.rank = count - 2;
  for (int d = 0; d < t.rank; ++d) {
    const std::string& w = words[2 + d];
    extent& e = t.extents[d];
    if (w == "batch") e = dim::batch;
    else if (w == "heads") e = dim::heads;
    else if (w == "query_length") e = dim::query_length;
    else if (w == "key_length") e = dim::key_length;
    else {
      char* end = nullptr;
      e = dim::fixed(int(std::strtol(w.c_str(), &end, 10)));
      if (end != w.c_str() + w.size()) return "bad extent `" + w + "`";
    }
  }
  return {};
}

}  // namespace attngen
