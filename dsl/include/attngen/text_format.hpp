#pragma once
/// A description as text, and back. The build uses it to carry a description from the C++ header that
/// states it to the generator, and generated headers record it (as C++) so a kernel says what it is.
///
/// Text form: one `key = value` per line (or several separated by `;`), `#` starts a comment. Keys: heads, kv_heads, head_dim,
/// v_head_dim, causal (none|top_left|bottom_right), additive_mask (none|lq_lk|h_lq_lk|b_h_lq_lk|b_1_lq_lk),
/// key_padding (none|true_means_ignore|true_means_keep), scale (a number or `default`), lse (true|false),
/// dtype (f32|f16|bf16), and for modifiers (attngen/modifier_text_format.hpp) tensor and scalar
/// (declarations, in order, before the modifiers that read them), score_mod and mask_mod. Omitted keys
/// keep their defaults.

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "attngen/attention.hpp"
#include "attngen/modifier_text_format.hpp"
#include "attngen/validation.hpp"

namespace attngen {

namespace detail {

template <typename Enum>
struct enum_spelling {
  Enum value;
  std::string_view text;
};

inline constexpr enum_spelling<causal_alignment> causal_spellings[] = {
    {causal_alignment::none, "none"},
    {causal_alignment::top_left, "top_left"},
    {causal_alignment::bottom_right, "bottom_right"}};
inline constexpr enum_spelling<mask_shape> mask_spellings[] = {
    {mask_shape::none, "none"},           {mask_shape::lq_lk, "lq_lk"},
    {mask_shape::h_lq_lk, "h_lq_lk"},     {mask_shape::b_h_lq_lk, "b_h_lq_lk"},
    {mask_shape::b_1_lq_lk, "b_1_lq_lk"}};
inline constexpr enum_spelling<padding_polarity> padding_spellings[] = {
    {padding_polarity::none, "none"},
    {padding_polarity::true_means_ignore, "true_means_ignore"},
    {padding_polarity::true_means_keep, "true_means_keep"}};
inline constexpr enum_spelling<dtype> dtype_spellings[] = {
    {dtype::f32, "f32"}, {dtype::f16, "f16"}, {dtype::bf16, "bf16"}};

template <typename Enum, std::size_t N>
constexpr std::string_view spell(const enum_spelling<Enum> (&table)[N], Enum value) {
  for (const auto& entry : table)
    if (entry.value == value) return entry.text;
  return "?";
}

template <typename Enum, std::size_t N>
constexpr bool parse_spelling(const enum_spelling<Enum> (&table)[N], std::string_view text, Enum& out) {
  for (const auto& entry : table)
    if (entry.text == text) {
      out = entry.value;
      return true;
    }
  return false;
}

inline std::string float_literal(float value, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, static_cast<double>(value));
  return buffer;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// What is wrong with a setting, and where: `at` points into the text (null: the value's start).
struct setting_problem {
  std::string why;  ///< empty when nothing is
  const char* at = nullptr;

  setting_problem() = default;
  setting_problem(std::string what, const char* where = nullptr) : why(std::move(what)), at(where) {}
  setting_problem(const char* what) : why(what) {}
};

/// Calls `setting(key, value)` for each `key = value` setting of `text`: one per line, or several on
/// a line separated by `;` (so a description fits on a command line); `#` starts a comment. `setting`
/// returns a setting_problem (or a string: what is wrong with the value). Returns the first problem as
/// "line L, column C: ...", or an empty string.
template <typename Setting>
std::string for_each_setting(std::string_view text, Setting&& setting) {
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    const char* const line_start = line.data();
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto where = [&](const char* at) {
      return "line " + std::to_string(line_number) + ", column " + std::to_string(at - line_start + 1) + ": ";
    };
    while (!line.empty()) {
      const auto semicolon = line.find(';');
      const std::string_view item = trim(line.substr(0, semicolon));
      line = semicolon == std::string_view::npos ? std::string_view{} : line.substr(semicolon + 1);
      if (item.empty()) continue;
      const auto equals = item.find('=');
      if (equals == std::string_view::npos)
        return where(item.data()) + "expected `key = value`, got `" + std::string(item) + "`";
      const std::string_view key = trim(item.substr(0, equals)), value = trim(item.substr(equals + 1));
      const setting_problem problem = setting(key, value);
      if (!problem.why.empty()) return where(problem.at ? problem.at : value.data()) + problem.why;
    }
  }
  return {};
}

/// Parses all of `value` as a number.
template <typename Number>
bool parse_number(std::string_view value, Number& out) {
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  return ec == std::errc{} && ptr == value.data() + value.size();
}

}  // namespace detail

/// Spellings shared by the text form, messages and generated code.
constexpr std::string_view name_of(causal_alignment a) { return detail::spell(detail::causal_spellings, a); }
constexpr std::string_view name_of(mask_shape s) { return detail::spell(detail::mask_spellings, s); }
constexpr std::string_view name_of(padding_polarity p) { return detail::spell(detail::padding_spellings, p); }

/// The text form of `d`; parse_description(to_text(d)) == d.
inline std::string to_text(const attention_desc& d) {
  std::string text;
  auto line = [&](std::string_view key, const std::string& value) {
    text.append(key).append(" = ").append(value).append("\n");
  };
  line("heads", std::to_string(d.num_heads));
  line("kv_heads", std::to_string(d.effective_kv_heads()));
  line("head_dim", std::to_string(d.qk_head_dim));
  line("v_head_dim", std::to_string(d.effective_v_head_dim()));
  line("causal", std::string(name_of(d.causal_mode)));
  line("additive_mask", std::string(name_of(d.additive_mask_shape)));
  line("key_padding", std::string(name_of(d.key_padding)));
  line("scale", d.has_scale ? detail::float_literal(d.scale_value, "%.9g") : "default");
  line("lse", d.lse_output ? "true" : "false");
  line("dtype", std::string(name_of(d.element_type)));
  for (int t = 0; t < d.captures.tensor_count; ++t) line("tensor", to_text(d.captures.tensors[t]));
  for (int s = 0; s < d.captures.scalar_count; ++s) line("scalar", std::string(d.captures.scalars[s].view()));
  if (d.has_score_mod()) line("score_mod", to_text(d.score_modifier));
  if (d.has_mask_mod()) line("mask_mod", to_text(d.mask_modifier));
  return text;
}

/// The C++ expression that builds `d` with the DSL (exact: floats are written in hexadecimal).
inline std::string to_cpp(const attention_desc& d) {
  std::string cpp = "attngen::attention()";
  cpp += ".heads(" + std::to_string(d.num_heads) + ")";
  cpp += ".kv_heads(" + std::to_string(d.effective_kv_heads()) + ")";
  cpp += ".head_dim(" + std::to_string(d.qk_head_dim) + ")";
  cpp += ".v_head_dim(" + std::to_string(d.effective_v_head_dim()) + ")";
  if (d.is_causal()) cpp += ".causal(attngen::causal_alignment::" + std::string(name_of(d.causal_mode)) + ")";
  if (d.has_additive_mask())
    cpp += ".additive_mask(attngen::mask_shape::" + std::string(name_of(d.additive_mask_shape)) + ")";
  if (d.has_key_padding_mask())
    cpp += ".key_padding_mask(attngen::padding_polarity::" + std::string(name_of(d.key_padding)) + ")";
  if (d.has_scale) cpp += ".scale(" + detail::float_literal(d.scale_value, "%a") + "f)";
  if (d.lse_output) cpp += ".return_lse()";
  cpp += ".element(attngen::dtype::" + std::string(name_of(d.element_type)) + ")";
  for (int t = 0; t < d.captures.tensor_count; ++t) cpp += ".capture(" + detail::declaration_cpp(d.captures.tensors[t]) + ")";
  for (int s = 0; s < d.captures.scalar_count; ++s)
    cpp += ".capture(attngen::scalar(\"" + std::string(d.captures.scalars[s].view()) + "\"))";
  if (d.has_score_mod()) cpp += ".score_mod(" + to_cpp(d.score_modifier, d.captures) + ")";
  if (d.has_mask_mod()) cpp += ".mask_mod(" + to_cpp(d.mask_modifier, d.captures) + ")";
  return cpp;
}

/// Result of parsing a text description: `error` is empty on success, otherwise it names the line and
/// the column.
struct parsed_description {
  attention_desc desc;
  std::string error;
};

/// Parses the text form and validates the result with the same rules as the compile-time check.
inline parsed_description parse_description(std::string_view text) {
  parsed_description result;
  attention_desc& d = result.desc;
  result.error = detail::for_each_setting(text, [&](std::string_view key, std::string_view value) -> detail::setting_problem {
    bool ok = true;
    if (key == "heads") ok = detail::parse_number(value, d.num_heads);
    else if (key == "kv_heads") ok = detail::parse_number(value, d.num_kv_heads);
    else if (key == "head_dim") ok = detail::parse_number(value, d.qk_head_dim);
    else if (key == "v_head_dim") ok = detail::parse_number(value, d.v_dim);
    else if (key == "causal") ok = detail::parse_spelling(detail::causal_spellings, value, d.causal_mode);
    else if (key == "additive_mask") ok = detail::parse_spelling(detail::mask_spellings, value, d.additive_mask_shape);
    else if (key == "key_padding") ok = detail::parse_spelling(detail::padding_spellings, value, d.key_padding);
    else if (key == "dtype") ok = detail::parse_spelling(detail::dtype_spellings, value, d.element_type);
    else if (key == "lse") {
      ok = value == "true" || value == "false";
      d.lse_output = value == "true";
    } else if (key == "scale") {
      d.has_scale = value != "default";
      ok = !d.has_scale || detail::parse_number(value, d.scale_value);
    } else if (key == "tensor") {
      tensor_capture t;
      if (std::string why = parse_tensor_capture(value, t); !why.empty()) return why;
      if (d.captures.tensor_count == capture_table::max_tensors) return "more than 4 tensors";
      d.captures.tensors[d.captures.tensor_count++] = t;
    } else if (key == "scalar") {
      if (!detail::is_identifier(value)) return "a scalar's name must be an identifier";
      if (d.captures.scalar_count == capture_table::max_scalars) return "more than 4 scalars";
      d.captures.scalars[d.captures.scalar_count++] = capture_name::of(value);
    } else if (key == "score_mod" || key == "mask_mod") {
      modifier_graph& graph = key == "score_mod" ? d.score_modifier : d.mask_modifier;
      std::size_t at = 0;
      if (std::string why = parse_modifier(value, d.captures, graph, &at); !why.empty())
        return {std::string(key) + ": " + why, value.data() + at};
      const bool boolean = graph.root().kind == value_kind::boolean;
      if (key == "score_mod" && boolean) return "score_mod must be a number expression";
      if (key == "mask_mod" && !boolean) return "mask_mod must be a boolean expression";
    } else {
      return {"unknown key `" + std::string(key) + "`", key.data()};
    }
    return ok ? std::string() : "bad value `" + std::string(value) + "` for " + std::string(key);
  });
  if (!result.error.empty()) return result;
  if (const auto problem = first_problem(d); !problem.empty()) result.error = std::string(problem);
  return result;
}

}  // namespace attngen
