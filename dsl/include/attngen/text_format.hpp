#pragma once
/// A description as text, and back. The build uses it to carry a description from the C++ header that
/// states it to the generator, and generated headers record it (as C++) so a kernel says what it is.
///
/// Text form: one `key = value` per line (or several separated by `;`), `#` starts a comment. Keys: heads, kv_heads, head_dim,
/// v_head_dim, causal (none|top_left|bottom_right), additive_mask (none|lq_lk|h_lq_lk|b_h_lq_lk|b_1_lq_lk),
/// key_padding (none|true_means_ignore|true_means_keep), scale (a number or `default`), lse (true|false),
/// dtype (f32|f16|bf16), queries (dense|ragged), kv_layout (dense|lengths|paged), page_size,
/// kv_dtype (f32|f16|bf16|i8), sinks (true|false), and for modifiers (attngen/modifier_text_format.hpp) tensor and scalar
/// (declarations, in order, before the modifiers that read them), score_mod and mask_mod. Omitted keys
/// keep their defaults.

#include <string>
#include <string_view>

#include "attngen/attention.hpp"
#include "attngen/attention_knobs.hpp"
#include "attngen/knobs.hpp"
#include "attngen/modifier_text_format.hpp"
#include "attngen/validation.hpp"

namespace attngen {

namespace detail {

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
inline constexpr enum_spelling<dtype> kv_dtype_spellings[] = {
    {dtype::f32, "f32"}, {dtype::f16, "f16"}, {dtype::bf16, "bf16"}, {dtype::i8, "i8"}};
inline constexpr enum_spelling<query_layout> query_layout_spellings[] = {
    {query_layout::dense, "dense"}, {query_layout::ragged, "ragged"}};
inline constexpr enum_spelling<kv_layout> kv_layout_spellings[] = {
    {kv_layout::dense, "dense"}, {kv_layout::lengths, "lengths"}, {kv_layout::paged, "paged"}};

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

}  // namespace detail

/// Spellings shared by the text form, messages and generated code.
constexpr std::string_view name_of(causal_alignment a) { return detail::spell(detail::causal_spellings, a); }
constexpr std::string_view name_of(mask_shape s) { return detail::spell(detail::mask_spellings, s); }
constexpr std::string_view name_of(padding_polarity p) { return detail::spell(detail::padding_spellings, p); }

/// The C++ scopes of the description's enumerations (the knobs' C++ form).
constexpr std::string_view scope_of(causal_alignment) { return "attngen::causal_alignment::"; }
constexpr std::string_view scope_of(mask_shape) { return "attngen::mask_shape::"; }
constexpr std::string_view scope_of(padding_polarity) { return "attngen::padding_polarity::"; }
constexpr std::string_view scope_of(dtype) { return "attngen::dtype::"; }
constexpr std::string_view scope_of(query_layout) { return "attngen::query_layout::"; }
constexpr std::string_view scope_of(kv_layout) { return "attngen::kv_layout::"; }

namespace detail {

/// The operator description's knobs (attention_knobs.hpp), in the text form's and the C++ form's order.
/// Captures and modifiers follow them in both, in their own syntax (modifier_text_format.hpp).
inline constexpr knob<attention_desc> attention_knobs[] = {ATTNGEN_ATTENTION_KNOBS(ATTNGEN_KNOB_ENTRY, ATTNGEN_NO_RULE)};

}  // namespace detail

/// The text form of `d`; parse_description(to_text(d)) == d.
inline std::string to_text(const attention_desc& d) {
  std::string text = detail::knobs_text(detail::attention_knobs, d);
  auto line = [&](std::string_view key, const std::string& value) {
    text.append(key).append(" = ").append(value).append("\n");
  };
  for (int t = 0; t < d.captures.tensor_count; ++t) line("tensor", to_text(d.captures.tensors[t]));
  for (int s = 0; s < d.captures.scalar_count; ++s) line("scalar", std::string(d.captures.scalars[s].view()));
  if (d.has_score_mod()) line("score_mod", to_text(d.score_modifier));
  if (d.has_mask_mod()) line("mask_mod", to_text(d.mask_modifier));
  return text;
}

/// The C++ expression that builds `d` with the DSL (exact: floats are written in hexadecimal).
inline std::string to_cpp(const attention_desc& d) {
  std::string cpp = "attngen::attention()" + detail::knobs_cpp(detail::attention_knobs, d);
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
    if (const auto* knob = detail::find_knob(detail::attention_knobs, key)) {
      if (knob->parse(value, d)) return {};
      return "bad value `" + std::string(value) + "` for " + std::string(key);
    }
    if (key == "tensor") {
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
    return {};
  });
  if (!result.error.empty()) return result;
  if (const auto problem = first_problem(d); !problem.empty()) result.error = std::string(problem);
  return result;
}

}  // namespace attngen
