#include "spec.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "attngen/module_text_format.hpp"
#include "attngen/text_format.hpp"

namespace attngen::tool {

namespace {

// `[name]` on a line of its own (comments and spaces around allowed): the name, else empty.
std::string section_name(std::string_view line) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  line = detail::trim(line);
  if (line.size() < 2 || line.front() != '[' || line.back() != ']') return {};
  return std::string(detail::trim(line.substr(1, line.size() - 2)));
}

named_description parse_one(const std::string& name, const std::string& text, const std::string& source) {
  named_description d{name, attention_desc{}};
  std::string error;
  if (is_module_text(text)) {
    const auto parsed = parse_module_description(text);
    d.desc = parsed.desc;
    error = parsed.error;
  } else {
    const auto parsed = parse_description(text);
    d.desc = parsed.desc;
    error = parsed.error;
  }
  if (!error.empty()) throw std::runtime_error(source + (name.empty() ? "" : " [" + name + "]") + ": " + error);
  return d;
}

}  // namespace

std::vector<named_description> parse_spec(const std::string& text, const std::string& source) {
  // Split into lines; a section keeps the file's line numbers (other lines are left blank).
  std::vector<std::string> lines;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  std::vector<std::size_t> starts;
  for (std::size_t n = 0; n < lines.size(); ++n)
    if (!section_name(lines[n]).empty()) starts.push_back(n);
  if (starts.empty()) return {parse_one("", text, source)};

  std::vector<named_description> kernels;
  for (std::size_t n = 0; n < lines.size() && n < starts.front(); ++n) {
    std::string_view line = lines[n];
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    if (!detail::trim(line).empty())
      throw std::runtime_error(source + ": line " + std::to_string(n + 1) +
                               ", column 1: settings before the first `[name]` section");
  }
  for (std::size_t s = 0; s < starts.size(); ++s) {
    const std::string name = section_name(lines[starts[s]]);
    if (!detail::is_identifier(name))
      throw std::runtime_error(source + ": line " + std::to_string(starts[s] + 1) +
                               ", column 2: a kernel's name must be a C++ identifier, not `" + name + "`");
    for (const auto& seen : kernels)
      if (seen.name == name)
        throw std::runtime_error(source + ": line " + std::to_string(starts[s] + 1) + ", column 2: kernel `" + name +
                                 "` is named twice");
    const std::size_t end = s + 1 < starts.size() ? starts[s + 1] : lines.size();
    std::string section;
    for (std::size_t n = 0; n < lines.size(); ++n) section += (n > starts[s] && n < end ? lines[n] : "") + "\n";
    kernels.push_back(parse_one(name, section, source));
  }
  return kernels;
}

}  // namespace attngen::tool
