#pragma once
// Reads the generated header's typed call back, for the schema tests.

#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace attngen::testing {

/// The parameters' names of the typed `run(` (or `function`'s) declaration in a generated `header`:
/// tensors, captured scalars, a module's weights and dropout scalars.
inline std::vector<std::string> typed_parameters(const std::string& header, const std::string& function = "run") {
  const auto start = header.find("static attngen::status " + function + "(attngen::");
  REQUIRE(start != std::string::npos);
  const std::string declaration = header.substr(start, header.find(';', start) - start);
  std::vector<std::string> names;
  const std::regex parameter(R"((?:input_tensor|output_tensor|float|mha_weights&|bool|std::uint64_t) (\w+))");
  for (auto it = std::sregex_iterator(declaration.begin(), declaration.end(), parameter); it != std::sregex_iterator();
       ++it)
    names.push_back((*it)[1]);
  return names;
}

}  // namespace attngen::testing
