#pragma once
/// A module description as text, and back (see text_format.hpp for the operator's).
///
/// Text form: the line `kind = module`, then one `key = value` per line, `#` starts a comment. Keys:
/// embed_dim, heads, kv_heads, kdim, vdim, bias, add_bias_kv, add_zero_attn, batch_first, self_attention
/// (true|false),
/// dropout (a number), need_weights (none|per_head|averaged), causal (none|top_left|bottom_right),
/// key_padding_mask (none|boolean|additive), attn_mask (none|boolean|additive),
/// attn_mask_shape (none|l_s|bh_l_s|b_h_l_s), dtype (f32|f16|bf16). Omitted keys keep their defaults.

#include <string>
#include <string_view>

#include "attngen/module.hpp"
#include "attngen/module_knobs.hpp"
#include "attngen/module_validation.hpp"
#include "attngen/text_format.hpp"

namespace attngen {

namespace detail {

inline constexpr enum_spelling<mask_kind> mask_kind_spellings[] = {
    {mask_kind::none, "none"}, {mask_kind::boolean, "boolean"}, {mask_kind::additive, "additive"}};
inline constexpr enum_spelling<attn_mask_shape> attn_mask_shape_spellings[] = {
    {attn_mask_shape::none, "none"},
    {attn_mask_shape::l_s, "l_s"},
    {attn_mask_shape::bh_l_s, "bh_l_s"},
    {attn_mask_shape::b_h_l_s, "b_h_l_s"}};
inline constexpr enum_spelling<weights_output> weights_spellings[] = {
    {weights_output::none, "none"}, {weights_output::per_head, "per_head"}, {weights_output::averaged, "averaged"}};

}  // namespace detail

constexpr std::string_view name_of(mask_kind k) { return detail::spell(detail::mask_kind_spellings, k); }
constexpr std::string_view name_of(attn_mask_shape s) { return detail::spell(detail::attn_mask_shape_spellings, s); }
constexpr std::string_view name_of(weights_output w) { return detail::spell(detail::weights_spellings, w); }

/// The line that starts a module's text form.
inline constexpr std::string_view module_kind_line = "kind = module";

/// True when `text` is a module's text form (its first non-comment line is `kind = module`).
inline bool is_module_text(std::string_view text) {
  bool seen = false, module = false;
  detail::for_each_setting(text, [&](std::string_view key, std::string_view value) {
    if (!seen) module = key == "kind" && value == "module";
    seen = true;
    return std::string();
  });
  return module;
}

constexpr std::string_view scope_of(mask_kind) { return "attngen::mask_kind::"; }
constexpr std::string_view scope_of(attn_mask_shape) { return "attngen::attn_mask_shape::"; }
constexpr std::string_view scope_of(weights_output) { return "attngen::weights_output::"; }

namespace detail {

/// The module description's knobs (module_knobs.hpp), in the text form's and the C++ form's order.
inline constexpr knob<mha_desc> module_knobs[] = {ATTNGEN_MODULE_KNOBS(ATTNGEN_KNOB_ENTRY, ATTNGEN_NO_RULE)};

}  // namespace detail

/// The text form of `d`; parse_module_description(to_text(d)) == d.
inline std::string to_text(const mha_desc& d) {
  return std::string(module_kind_line) + "\n" + detail::knobs_text(detail::module_knobs, d);
}

/// The C++ expression that builds `d` with the DSL (exact: floats are written in hexadecimal).
inline std::string to_cpp(const mha_desc& d) {
  return "attngen::multihead_attention()" + detail::knobs_cpp(detail::module_knobs, d);
}

/// Result of parsing a module's text form: `error` is empty on success, otherwise it names the line.
struct parsed_module_description {
  mha_desc desc;
  std::string error;
};

/// Parses a module's text form and validates the result with the same rules as the compile-time check.
inline parsed_module_description parse_module_description(std::string_view text) {
  parsed_module_description result;
  mha_desc& d = result.desc;
  bool kind_seen = false;
  result.error = detail::for_each_setting(text, [&](std::string_view key, std::string_view value) -> detail::setting_problem {
    if (!kind_seen) {
      kind_seen = key == "kind" && value == "module";
      if (kind_seen) return {};
      return {"a module description starts with `kind = module`", key.data()};
    }
    const auto* knob = detail::find_knob(detail::module_knobs, key);
    if (knob == nullptr) return {"unknown key `" + std::string(key) + "`", key.data()};
    if (knob->parse(value, d)) return {};
    return "bad value `" + std::string(value) + "` for " + std::string(key);
  });
  if (!result.error.empty()) return result;
  if (!kind_seen) {
    result.error = "empty description: a module description starts with `kind = module`";
    return result;
  }
  if (const auto problem = first_problem(d); !problem.empty()) result.error = std::string(problem);
  return result;
}

}  // namespace attngen
