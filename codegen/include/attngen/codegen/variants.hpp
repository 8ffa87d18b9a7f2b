#pragma once
/// The tilings each description is generated with (see attngen/runtime/detail/variants.hpp for the rule that
/// picks one per call).

#include <vector>

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/visibility_table.hpp"
#include "attngen/module.hpp"
#include "attngen/runtime/detail/variants.hpp"

namespace attngen::codegen {

/// Blocking of `variant` for `desc` on a CPU target.
blocking cpu_variant_blocking(const attention_desc& desc, const Halide::Target& target, kernel_variant variant);

/// Queries below which the runtime may take single_query for `desc` on `target` (choose_variant):
/// the fewest that fill a 16-row short_queries tile, whatever rows that variant's tiles hold.
int single_query_threshold(const attention_desc& desc, const Halide::Target& target);

/// The tiles of each variant on each of a kernel's CPU targets, `[variant][target]`: the visibility
/// table's part (visibility_table.hpp) gives each target a slice on its tiles.
std::vector<std::vector<visibility_grid>> cpu_variant_tiles(const attention_desc& desc,
                                                            const std::vector<Halide::Target>& kernel_targets);

/// Blocking of `variant` for `desc` on `target` in a kernel generated for the CPU targets
/// `kernel_targets` (`target` among them): the kernel reads the visibility table's slice of
/// `target`. (cpu_variant_blocking's reads slice 0: a kernel for `target` alone.)
blocking cpu_kernel_variant_blocking(const attention_desc& desc, const Halide::Target& target,
                                     const std::vector<Halide::Target>& kernel_targets, kernel_variant variant);

/// Blocking of `variant` for the attention of module `desc` on a CPU target.
blocking cpu_module_variant_blocking(const mha_desc& desc, const Halide::Target& target, kernel_variant variant);

}  // namespace attngen::codegen
