#pragma once
/// The tensor-core test cases of the registry (support/configurations.hpp): one per configuration
/// with tensor-core calls, running its generated variant where `runners` run it (the host model of
/// the warp, or a CUDA device) against the float64 reference at those calls, and one per
/// configuration with tensor-core batches (KV-cache layouts).

#include <vector>

#include "tensorcore/tensorcore_run.hpp"

namespace attngen::testing {

/// Registers the cases; `where` ends their names ("on the host model", "on this CUDA device").
/// Call during static initialisation.
bool register_tensorcore_cases(const std::vector<compiled_tensorcore_variant>& runners, const char* where);

}  // namespace attngen::testing
