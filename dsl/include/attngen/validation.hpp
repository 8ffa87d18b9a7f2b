#pragma once
/// Validation of attention descriptions, at compile time and at run time, from one list of rules: the
/// knobs' (attention_knobs.hpp), then the captures' and the modifiers'.
///
/// Compile time:  `attngen::validated<my_desc>()` (the build calls it for every kernel) stops compilation
///                with "static assertion failed: attngen: <message>" for the first broken rule.
/// Run time:      `attngen::first_problem(desc)` returns the same message, or an empty view when valid
///                (used for descriptions that arrive as text).

#include <string_view>

#include "attngen/arguments.hpp"
#include "attngen/attention.hpp"
#include "attngen/attention_knobs.hpp"

namespace attngen {

/// Largest supported head dimension: per-block scratch (key block x head_dim) lives on the stack.
inline constexpr int max_head_dim = 512;

namespace detail {

/// Names the generated typed call gives its own parameters and locals besides the schema's
/// arguments (codegen's wrapper: `run(q, ..., gpu)`, its body's `tensors` and `scalars`, the
/// struct's `description`).
inline constexpr std::string_view typed_call_names[] = {"gpu", "tensors", "scalars", "description"};

inline constexpr std::string_view cpp_keywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};

/// Whether `name` can name a parameter of the generated typed call beside the schema's arguments.
constexpr bool free_for_typed_call(std::string_view name) {
  for (const kernel_argument& a : argument_table(attention_desc{}))
    if (a.slot != argument_slot::capture && a.name == name) return false;
  for (std::string_view taken : typed_call_names)
    if (taken == name) return false;
  for (std::string_view keyword : cpp_keywords)
    if (keyword == name) return false;
  return true;
}

constexpr bool capture_names_free(const capture_table& c) {
  for (int n = 0; n < c.tensor_count; ++n)
    if (!free_for_typed_call(c.tensors[n].name.view())) return false;
  for (int n = 0; n < c.scalar_count; ++n)
    if (!free_for_typed_call(c.scalars[n].view())) return false;
  return true;
}

}  // namespace detail

// The description's rules past its knobs' (attention_knobs.hpp): the captures' and the modifiers'.
// Each: an identifier, a condition that must hold for a valid description `d`, and the message.
#define ATTNGEN_CAPTURE_AND_MODIFIER_RULES(RULE)                                                         \
  RULE(modifiers_fit, !d.score_modifier.overflow && !d.mask_modifier.overflow,                           \
       "a modifier expression has more than 40 nodes")                                                   \
  RULE(captures_fit, !d.captures.overflow, "at most 4 tensors and 4 scalars can be captured")            \
  RULE(capture_names_valid, detail::capture_names_valid(d.captures),                                     \
       "captured tensors and scalars need distinct names: identifiers of at most 15 characters")         \
  RULE(capture_names_free, detail::capture_names_free(d.captures),                                       \
       "a captured tensor or scalar cannot be named q, k, v, mask, key_padding, output, lse, q_offsets, "     \
       "k_scale, v_scale, page_table, kv_lengths, positions, sinks, gpu, tensors, scalars, description or a C++ keyword: " \
       "the generated typed call has parameters of those names")                                              \
  RULE(capture_names_apart_from_gradients, !d.backward || detail::capture_names_apart_from_gradients(d.captures), \
       "with .with_backward(), a captured tensor or scalar cannot be named dq, dk, dv or d_...: the backward's " \
       "typed call names the gradients so (d_output, d_<capture>, d_scalars)")                                  \
  RULE(capture_extents_valid, detail::capture_extents_valid(d.captures),                                 \
       "a captured tensor's fixed extent must be at least 1")                                            \
  RULE(modifier_integers_exact,                                                                          \
       detail::integer_constants_exact(d.score_modifier) &&                                              \
           detail::integer_constants_exact(d.mask_modifier),                                             \
       "an integer constant in a modifier must lie within -2^24 to 2^24 (16777216)")                     \
  RULE(mask_mod_reads_no_score, !detail::reads(d.mask_modifier, expr_op::score),                        \
       "mask_mod cannot read score: it decides visibility from b, h, q, kv; use score_mod for scores")   \
  RULE(modifiers_read_declared_captures,                                                                 \
       detail::reads_only_declared_captures(d.score_modifier, d.captures) &&                             \
           detail::reads_only_declared_captures(d.mask_modifier, d.captures),                            \
       "a modifier reads a tensor or scalar the description does not declare: add .capture(it)")         \
  RULE(tensor_reads_match_rank,                                                                          \
       detail::reads_tensors_at_their_rank(d.score_modifier, d.captures) &&                              \
           detail::reads_tensors_at_their_rank(d.mask_modifier, d.captures),                             \
       "a captured tensor is read with a different number of indices than its declared dimensions")

/// Every rule of an operator description, in the order they are checked.
#define ATTNGEN_DESCRIPTION_RULES(RULE) \
  ATTNGEN_ATTENTION_KNOBS(ATTNGEN_NO_KNOB, RULE) ATTNGEN_CAPTURE_AND_MODIFIER_RULES(RULE)

// Defines, for the description type TYPE and its rule list RULES: detail::rule_<id>(d) per rule;
// first_problem(d), the message of the first rule `d` breaks or an empty view when it is valid;
// is_valid(d); and validated<D>(), which checks `D` at compile time (each broken rule a static_assert
// with its message) and returns it. Shared by every kind of description.
#define ATTNGEN_RULE_AS_FUNCTION(id, condition, message) \
  constexpr bool rule_##id(const auto& d) { return condition; }
#define ATTNGEN_RULE_AS_CHECK(id, condition, message) \
  if (!detail::rule_##id(d)) return message;
#define ATTNGEN_RULE_AS_STATIC_ASSERT(id, condition, message) \
  static_assert(detail::rule_##id(D), "attngen: " message);
#define ATTNGEN_VALIDATION_FUNCTIONS(TYPE, RULES)                                  \
  namespace detail {                                                               \
  RULES(ATTNGEN_RULE_AS_FUNCTION)                                                  \
  }                                                                                \
  constexpr std::string_view first_problem(const TYPE& d) {                       \
    RULES(ATTNGEN_RULE_AS_CHECK)                                                   \
    return {};                                                                     \
  }                                                                                \
  constexpr bool is_valid(const TYPE& d) { return first_problem(d).empty(); }     \
  template <TYPE D>                                                                \
  constexpr TYPE validated() {                                                     \
    RULES(ATTNGEN_RULE_AS_STATIC_ASSERT)                                           \
    return D;                                                                      \
  }

/// first_problem(const attention_desc&), is_valid(const attention_desc&), validated<attention_desc D>().
ATTNGEN_VALIDATION_FUNCTIONS(attention_desc, ATTNGEN_DESCRIPTION_RULES)

}  // namespace attngen
