#pragma once
/// A test's generated kernel, required: the test fails, naming the missing kernel, where the build
/// generated none for the configuration.

#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "support/compiled_kernels.hpp"

namespace attngen::testing {

/// The kernel of `configuration` in `kernels`, which tests/CMakeLists.txt generates as
/// `<prefix><configuration>` (prefix aot_ or gpu_).
inline const compiled_kernel& required_kernel(const std::vector<compiled_kernel>& kernels,
                                              std::string_view configuration, std::string_view prefix) {
  const compiled_kernel* kernel = find_kernel(kernels, configuration);
  INFO("tests/CMakeLists.txt generates no kernel " << prefix << configuration);
  REQUIRE(kernel != nullptr);
  return *kernel;
}

}  // namespace attngen::testing
