#pragma once
/// Validation of attention descriptions, at compile time and at run time, from one list of rules.
///
/// Compile time:  `attngen::validated<my_desc>()` (the build calls it for every kernel) stops compilation
///                with "static assertion failed: attngen: <message>" for the first broken rule.
/// Run time:      `attngen::first_problem(desc)` returns the same message, or an empty view when valid
///                (used for descriptions that arrive as text).

#include <string_view>

#include "attngen/attention.hpp"

namespace attngen {

/// Largest supported head dimension: per-block scratch (key block x head_dim) lives on the stack.
inline constexpr int max_head_dim = 512;

// Each rule: an identifier, a condition that must hold for a valid description `d`, and the message.
// Conditions are written so that a broken earlier rule never makes a later one ill-formed (no division
// by zero), so the first message is always the one that names the cause.
#define ATTNGEN_DESCRIPTION_RULES(RULE)                                                                   \
  RULE(heads_given, d.num_heads != attention_desc::unset,                                                \
       "heads is not set: call .heads(n)")                                                               \
  RULE(heads_positive, d.num_heads == attention_desc::unset || d.num_heads >= 1,                         \
       "heads must be at least 1")                                                                       \
  RULE(kv_heads_positive, d.num_kv_heads == attention_desc::unset || d.num_kv_heads >= 1,                \
       "kv_heads must be at least 1")                                                                    \
  RULE(kv_heads_divide_heads,                                                                            \
       d.num_heads < 1 || d.effective_kv_heads() < 1 || d.num_heads % d.effective_kv_heads() == 0,       \
       "heads must be a multiple of kv_heads (each kv head serves heads/kv_heads query heads)")          \
  RULE(head_dim_given, d.qk_head_dim != attention_desc::unset,                                           \
       "head_dim is not set: call .head_dim(n)")                                                         \
  RULE(head_dim_in_range,                                                                                \
       d.qk_head_dim == attention_desc::unset || (d.qk_head_dim >= 1 && d.qk_head_dim <= max_head_dim),  \
       "head_dim must be between 1 and 512")                                                             \
  RULE(v_head_dim_in_range,                                                                              \
       d.v_dim == attention_desc::unset || (d.v_dim >= 1 && d.v_dim <= max_head_dim),                    \
       "v_head_dim must be between 1 and 512")                                                           \
  RULE(scale_finite,                                                                                     \
       !d.has_scale || (d.scale_value == d.scale_value && d.scale_value <= 3.4e38f &&                    \
                        d.scale_value >= -3.4e38f),                                                      \
       "scale must be a finite number")                                                                  \
  RULE(element_type_is_float,                                                                            \
       d.element_type == dtype::f32 || d.element_type == dtype::f16 || d.element_type == dtype::bf16,     \
       "element type must be f32, f16 or bf16 (u8 is for boolean masks, i32 for captured tensors)")      \
  RULE(modifiers_fit, !d.score_modifier.overflow && !d.mask_modifier.overflow,                           \
       "a modifier expression has more than 40 nodes")                                                   \
  RULE(captures_fit, !d.captures.overflow, "at most 4 tensors and 4 scalars can be captured")            \
  RULE(capture_names_valid, detail::capture_names_valid(d.captures),                                     \
       "captured tensors and scalars need distinct names: identifiers of at most 15 characters")         \
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
