#pragma once
/// A description's knobs as one table per description type: each knob's text-form key, the DSL
/// setter that sets it, its type (through the factory that makes the entry) and its default (the
/// member's value in a default-constructed description). The tables are written with their rules
/// (attention_knobs.hpp, module_knobs.hpp); the text form's printer and parser and the C++ printer
/// (text_format.hpp, module_text_format.hpp) are loops over them, and validation (validation.hpp,
/// module_validation.hpp) checks their rules, so a new knob is one entry with its rules, its member
/// and its setter.

#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "attngen/attention.hpp"

namespace attngen::detail {

template <typename Enum>
struct enum_spelling {
  Enum value;
  std::string_view text;
};

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

/// Parses all of `value` as a number.
template <typename Number>
bool parse_number(std::string_view value, Number& out) {
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  return ec == std::errc{} && ptr == value.data() + value.size();
}

/// One knob of a description of type Desc.
template <typename Desc>
struct knob {
  std::string_view key;     ///< in the text form
  std::string_view setter;  ///< the DSL method that sets it (to_cpp)
  /// The value as the text form writes it; empty leaves the line out.
  std::string (*text)(const Desc&);
  /// Reads a value of the text form into the description; false: not a value of this knob.
  bool (*parse)(std::string_view, Desc&);
  /// The setter's arguments as C++; nullopt leaves the call out.
  std::optional<std::string> (*cpp)(const Desc&);
};

/// When a knob is written.
enum class written : std::uint8_t {
  always,
  when_set,  ///< only when it differs from the default description's (sizes that default to others)
  never,     ///< another knob writes it (in C++, a setter that takes two knobs)
};

template <typename>
struct member_of;
template <typename D, typename T>
struct member_of<T D::*> {
  using desc = D;
  using type = T;
};

/// The value a knob writes: the member's, or an accessor's (the effective kv heads of an unset one).
template <auto Member, auto Shown>
constexpr auto shown_value(const typename member_of<decltype(Member)>::desc& d) {
  if constexpr (std::is_member_function_pointer_v<decltype(Shown)>) return (d.*Shown)();
  else return d.*Shown;
}

template <auto Member>
constexpr bool is_default(const typename member_of<decltype(Member)>::desc& d) {
  using Desc = typename member_of<decltype(Member)>::desc;
  return d.*Member == Desc{}.*Member;
}

/// A knob whose value is written by `format` and read by `read`, written in text and C++ as asked.
template <auto Member, auto Shown, written Text, written Cpp, auto Format, auto Read>
constexpr knob<typename member_of<decltype(Member)>::desc> make_knob(std::string_view key, std::string_view setter) {
  using Desc = typename member_of<decltype(Member)>::desc;
  return {key, setter,
          [](const Desc& d) -> std::string {
            if (Text == written::never || (Text == written::when_set && is_default<Member>(d))) return {};
            return Format(shown_value<Member, Shown>(d), false);
          },
          [](std::string_view value, Desc& d) { return Read(value, d.*Member); },
          [](const Desc& d) -> std::optional<std::string> {
            if (Cpp == written::never || (Cpp == written::when_set && is_default<Member>(d))) return std::nullopt;
            return Format(shown_value<Member, Shown>(d), true);
          }};
}

inline std::string format_integer(int value, bool) { return std::to_string(value); }
inline bool read_integer(std::string_view text, int& out) { return parse_number(text, out); }
inline std::string format_flag(bool on, bool) { return on ? "true" : "false"; }
inline bool read_flag(std::string_view text, bool& out) {
  out = text == "true";
  return text == "true" || text == "false";
}
/// Floats: decimal in the text form, exact hexadecimal in C++.
inline std::string format_float(float value, bool cpp) {
  return cpp ? float_literal(value, "%a") + "f" : float_literal(value, "%.9g");
}
inline bool read_float(std::string_view text, float& out) { return parse_number(text, out); }

/// Enumerations: spelled by `Table` (an enum_spelling array) in the text form, and in C++ as the
/// spelling after scope_of(value) ("attngen::mask_shape::", found by argument-dependent lookup).
template <auto& Table>
std::string format_enum(decltype(Table[0].value) value, bool cpp) {
  return (cpp ? std::string(scope_of(value)) : std::string()) + std::string(spell(Table, value));
}
template <auto& Table>
bool read_enum(std::string_view text, decltype(Table[0].value)& out) {
  return parse_spelling(Table, text, out);
}

/// An integer knob (a count or a size); `Shown` is what it writes (an effective value's accessor).
template <auto Member, auto Shown = Member, written Text = written::always, written Cpp = written::always>
constexpr auto integer_knob(std::string_view key, std::string_view setter) {
  return make_knob<Member, Shown, Text, Cpp, &format_integer, &read_integer>(key, setter);
}

/// A true/false knob.
template <auto Member>
constexpr auto flag_knob(std::string_view key, std::string_view setter) {
  return make_knob<Member, Member, written::always, written::always, &format_flag, &read_flag>(key, setter);
}

/// A float knob.
template <auto Member>
constexpr auto float_knob(std::string_view key, std::string_view setter) {
  return make_knob<Member, Member, written::always, written::always, &format_float, &read_float>(key, setter);
}

/// An enumeration knob (format_enum).
template <auto Member, auto& Table, written Cpp = written::always, written Text = written::always>
constexpr auto enum_knob(std::string_view key, std::string_view setter) {
  return make_knob<Member, Member, Text, Cpp, &format_enum<Table>, &read_enum<Table>>(key, setter);
}

/// The text form's lines of the knobs of `d`, in table order.
template <typename Desc, std::size_t N>
std::string knobs_text(const knob<Desc> (&table)[N], const Desc& d) {
  std::string text;
  for (const knob<Desc>& k : table)
    if (const std::string value = k.text(d); !value.empty()) text.append(k.key).append(" = ").append(value).append("\n");
  return text;
}

/// The DSL calls that set the knobs of `d`, in table order: ".heads(8).kv_heads(1)...".
template <typename Desc, std::size_t N>
std::string knobs_cpp(const knob<Desc> (&table)[N], const Desc& d) {
  std::string cpp;
  for (const knob<Desc>& k : table)
    if (const auto arguments = k.cpp(d)) cpp.append(".").append(k.setter).append("(").append(*arguments).append(")");
  return cpp;
}

/// The knob called `key`, or null.
template <typename Desc, std::size_t N>
const knob<Desc>* find_knob(const knob<Desc> (&table)[N], std::string_view key) {
  for (const knob<Desc>& k : table)
    if (k.key == key) return &k;
  return nullptr;
}

}  // namespace attngen::detail
