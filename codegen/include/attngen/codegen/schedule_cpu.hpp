#pragma once
/// How the attention algorithm runs on CPUs: tiling, vectorisation, parallelism.

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"

namespace attngen::codegen {

/// Tile sizes for a CPU target: vector width from the target's widest float vector.
blocking cpu_blocking(const attention_desc& desc, const Halide::Target& target);

/// Schedules every stage of `a` for a CPU target. Parallel over (head, batch), query tiles inside.
void schedule_cpu(attention_algorithm& a, const Halide::Target& target);

}  // namespace attngen::codegen
