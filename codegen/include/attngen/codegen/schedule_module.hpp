#pragma once
/// How the multi-head attention module runs on CPUs.

#include "Halide.h"
#include "attngen/codegen/module_algorithm.hpp"

namespace attngen::codegen {

/// Schedules every stage of `m` for `target`: each projection a tiled matrix product over all rows,
/// computed once and in parallel; the attention as schedule_cpu does (its output and log-sum-exp
/// computed once, before the output projection reads them); the weights row by row.
void schedule_module_cpu(module_algorithm& m, const Halide::Target& target);

}  // namespace attngen::codegen
