#pragma once
/// The AMX test cases of the registry (support/configurations.hpp): one per configuration with
/// tensor-core calls whose description the AMX path takes (attngen::amx::refusal), running its
/// generated variant through the AMX tile code against the float64 reference at those calls.

#include <vector>

#include "tensorcore/tensorcore_run.hpp"

namespace attngen::testing {

/// The variants run on emulated tiles (compiled_amx_variants.hpp) and on this CPU's AMX tiles
/// (amx_hardware_variants.cpp); a configuration the path does not take has a null runner.
extern const std::vector<compiled_tensorcore_variant> compiled_amx_hardware_variants;

/// Registers the cases; `where` ends their names; `needs_amx`: skipped (with a warning) where this CPU
/// has no AMX. Call during static initialisation.
bool register_amx_cases(const std::vector<compiled_tensorcore_variant>& runners, const char* where, bool needs_amx);

}  // namespace attngen::testing
