#pragma once
/// The tilings each description is generated with (see attngen/runtime/variants.hpp for the rule that
/// picks one per call).

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/module.hpp"
#include "attngen/runtime/variants.hpp"

namespace attngen::codegen {

/// Blocking of `variant` for `desc` on a CPU target.
blocking cpu_variant_blocking(const attention_desc& desc, const Halide::Target& target, kernel_variant variant);

/// Blocking of `variant` for the attention of module `desc` on a CPU target.
blocking cpu_module_variant_blocking(const mha_desc& desc, const Halide::Target& target, kernel_variant variant);

}  // namespace attngen::codegen
