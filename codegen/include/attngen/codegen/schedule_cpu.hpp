#pragma once
/// How the attention algorithm runs on CPUs: tiling, vectorisation, parallelism.

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"

namespace attngen::codegen {

/// Tile sizes for a CPU target: vector width from the target's widest float vector.
blocking cpu_blocking(const Halide::Target& target);

/// Schedules every stage of `a`, defined with cpu_blocking(target), for that CPU target. Parallel
/// over (head, batch), query tiles inside.
void schedule_cpu(attention_algorithm& a);

}  // namespace attngen::codegen
