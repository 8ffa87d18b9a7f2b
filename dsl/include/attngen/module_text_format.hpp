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

/// The text form of `d`; parse_module_description(to_text(d)) == d.
inline std::string to_text(const mha_desc& d) {
  std::string text = std::string(module_kind_line) + "\n";
  auto line = [&](std::string_view key, const std::string& value) {
    text.append(key).append(" = ").append(value).append("\n");
  };
  auto flag = [](bool on) { return std::string(on ? "true" : "false"); };
  line("embed_dim", std::to_string(d.embed));
  line("heads", std::to_string(d.num_heads));
  // Sizes that default to others are written only when set, so the text round-trips exactly.
  if (d.num_kv_heads != mha_desc::unset) line("kv_heads", std::to_string(d.num_kv_heads));
  if (d.key_dim != mha_desc::unset) line("kdim", std::to_string(d.key_dim));
  if (d.value_dim != mha_desc::unset) line("vdim", std::to_string(d.value_dim));
  line("bias", flag(d.projection_bias));
  line("add_bias_kv", flag(d.bias_kv));
  line("add_zero_attn", flag(d.zero_attn));
  line("batch_first", flag(d.batch_major));
  line("self_attention", flag(d.self_attn));
  line("dropout", detail::float_literal(d.dropout_p, "%.9g"));
  line("need_weights", std::string(name_of(d.weights)));
  line("causal", std::string(name_of(d.causal_mode)));
  line("key_padding_mask", std::string(name_of(d.key_padding)));
  line("attn_mask", std::string(name_of(d.mask)));
  line("attn_mask_shape", std::string(name_of(d.mask_dims)));
  line("dtype", std::string(name_of(d.element_type)));
  return text;
}

/// The C++ expression that builds `d` with the DSL (exact: floats are written in hexadecimal).
inline std::string to_cpp(const mha_desc& d) {
  auto flag = [](bool on) { return std::string(on ? "true" : "false"); };
  std::string cpp = "attngen::multihead_attention()";
  cpp += ".embed_dim(" + std::to_string(d.embed) + ")";
  cpp += ".heads(" + std::to_string(d.num_heads) + ")";
  if (d.num_kv_heads != mha_desc::unset) cpp += ".kv_heads(" + std::to_string(d.num_kv_heads) + ")";
  if (d.key_dim != mha_desc::unset) cpp += ".kdim(" + std::to_string(d.key_dim) + ")";
  if (d.value_dim != mha_desc::unset) cpp += ".vdim(" + std::to_string(d.value_dim) + ")";
  cpp += ".bias(" + flag(d.projection_bias) + ")";
  cpp += ".add_bias_kv(" + flag(d.bias_kv) + ")";
  cpp += ".add_zero_attn(" + flag(d.zero_attn) + ")";
  cpp += ".batch_first(" + flag(d.batch_major) + ")";
  cpp += ".self_attention(" + flag(d.self_attn) + ")";
  cpp += ".dropout(" + detail::float_literal(d.dropout_p, "%a") + "f)";
  cpp += ".need_weights(attngen::weights_output::" + std::string(name_of(d.weights)) + ")";
  cpp += ".causal(attngen::causal_alignment::" + std::string(name_of(d.causal_mode)) + ")";
  cpp += ".key_padding_mask(attngen::mask_kind::" + std::string(name_of(d.key_padding)) + ")";
  cpp += ".attn_mask(attngen::mask_kind::" + std::string(name_of(d.mask)) + ", attngen::attn_mask_shape::" +
         std::string(name_of(d.mask_dims)) + ")";
  cpp += ".element(attngen::dtype::" + std::string(name_of(d.element_type)) + ")";
  return cpp;
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
    auto parse_flag = [&](bool& out) {
      out = value == "true";
      return value == "true" || value == "false";
    };
    bool ok = true;
    if (key == "embed_dim") ok = detail::parse_number(value, d.embed);
    else if (key == "heads") ok = detail::parse_number(value, d.num_heads);
    else if (key == "kv_heads") ok = detail::parse_number(value, d.num_kv_heads);
    else if (key == "kdim") ok = detail::parse_number(value, d.key_dim);
    else if (key == "vdim") ok = detail::parse_number(value, d.value_dim);
    else if (key == "bias") ok = parse_flag(d.projection_bias);
    else if (key == "add_bias_kv") ok = parse_flag(d.bias_kv);
    else if (key == "add_zero_attn") ok = parse_flag(d.zero_attn);
    else if (key == "batch_first") ok = parse_flag(d.batch_major);
    else if (key == "self_attention") ok = parse_flag(d.self_attn);
    else if (key == "dropout") ok = detail::parse_number(value, d.dropout_p);
    else if (key == "need_weights") ok = detail::parse_spelling(detail::weights_spellings, value, d.weights);
    else if (key == "causal") ok = detail::parse_spelling(detail::causal_spellings, value, d.causal_mode);
    else if (key == "key_padding_mask") ok = detail::parse_spelling(detail::mask_kind_spellings, value, d.key_padding);
    else if (key == "attn_mask") ok = detail::parse_spelling(detail::mask_kind_spellings, value, d.mask);
    else if (key == "attn_mask_shape") ok = detail::parse_spelling(detail::attn_mask_shape_spellings, value, d.mask_dims);
    else if (key == "dtype") ok = detail::parse_spelling(detail::dtype_spellings, value, d.element_type);
    else return {"unknown key `" + std::string(key) + "`", key.data()};
    return ok ? std::string() : "bad value `" + std::string(value) + "` for " + std::string(key);
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
