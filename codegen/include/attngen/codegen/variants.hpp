#pragma once
/// The tilings each description is generated with (see attngen/runtime/variants.hpp for the rule that
/// picks one per call).

#include <vector>

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/module.hpp"
#include "attngen/runtime/variants.hpp"

namespace attngen::codegen {

/// Blocking of `variant` for `desc` on a CPU target.
blocking cpu_variant_blocking(const attention_desc& desc, const Halide::Target& target, kernel_variant variant);

/// The run-time visibility table's grid for `variant` (visibility_table.hpp): queries and keys per
/// entry, the finest tiles and blocks of the CPU targets a kernel is generated for. The targets'
/// lanes are powers of two and each variant's tiles and blocks grow with them, so the grid divides
/// every target's (define_attention checks).
struct visibility_grid {
  int queries = 0, keys = 0;
};
visibility_grid cpu_visibility_grid(const attention_desc& desc, const std::vector<Halide::Target>& kernel_targets,
                                    kernel_variant variant);

/// Blocking of `variant` for `desc` on `target` in a kernel generated for the CPU targets
/// `kernel_targets`: its visibility grid is theirs (cpu_visibility_grid), so that one table serves
/// whichever target runs. (cpu_variant_blocking's is the target's own tiles.)
blocking cpu_kernel_variant_blocking(const attention_desc& desc, const Halide::Target& target,
                                     const std::vector<Halide::Target>& kernel_targets, kernel_variant variant);

/// Blocking of `variant` for the attention of module `desc` on a CPU target.
blocking cpu_module_variant_blocking(const mha_desc& desc, const Halide::Target& target, kernel_variant variant);

}  // namespace attngen::codegen
