#pragma once
// Kernel descriptions as the generator reads them: a spec file holding one description, or several
// in `[name]` sections, or a description given on the command line (settings separated by `;`).

#include <string>
#include <variant>
#include <vector>

#include "attngen/attention.hpp"
#include "attngen/module.hpp"

namespace attngen::tool {

struct named_description {
  std::string name;  ///< empty: the source named none (the command line's --name gives it)
  std::variant<attention_desc, mha_desc> desc;
};

/// The descriptions in `text`, read from `source` (a path, or "--describe"). Errors throw
/// std::runtime_error as "SOURCE: line L, column C: what is wrong".
std::vector<named_description> parse_spec(const std::string& text, const std::string& source);

}  // namespace attngen::tool
