#pragma once
/// Kernels that attngen_add_kernel generated from configurations of the registry
/// (support/configurations.hpp), found by configuration name. The build writes each program's list,
/// `compiled_kernels` in the header compiled_kernels.hpp (attngen_configuration_kernels in
/// support/configuration_kernels.cmake), from the kernels it links.

#include <string_view>
#include <type_traits>
#include <vector>

#include "attngen/runtime.hpp"

namespace attngen::testing {

struct compiled_kernel {
  std::string_view configuration;
  const char* description_text;    ///< the generated header's text form of its description
  status (*run_operator)(const attention_args&) = nullptr;  ///< an operator kernel's run
  status (*run_module)(const mha_args&) = nullptr;          ///< a module kernel's run
  /// An operator kernel's backward pass, where its description has one.
  status (*run_backward)(const attention_backward_args&) = nullptr;
  /// A module kernel's backward pass, where its description has one.
  status (*run_module_backward)(const mha_backward_args&) = nullptr;
};

/// The entry of the generated kernel struct `Kernel`.
template <typename Kernel>
compiled_kernel compiled(std::string_view configuration) {
  compiled_kernel k{configuration, Kernel::description_text};
  if constexpr (std::is_same_v<std::remove_cv_t<decltype(Kernel::description)>, attention_desc>) {
    k.run_operator = &Kernel::run;
    if constexpr (Kernel::description.backward)
      k.run_backward = static_cast<status (*)(const attention_backward_args&)>(&Kernel::backward);
  } else {
    k.run_module = &Kernel::run;
    if constexpr (Kernel::description.backward) k.run_module_backward = &Kernel::backward;
  }
  return k;
}

/// The kernel generated from `configuration` in `kernels`, or null.
inline const compiled_kernel* find_kernel(const std::vector<compiled_kernel>& kernels, std::string_view configuration) {
  for (const compiled_kernel& k : kernels)
    if (k.configuration == configuration) return &k;
  return nullptr;
}

}  // namespace attngen::testing
