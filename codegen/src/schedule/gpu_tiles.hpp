#pragma once
// GPU scheduling steps the module's schedules share (schedule_module_gpu.cpp defines them).

#include <vector>

#include "Halide.h"
#include "attngen/codegen/module_algorithm.hpp"

namespace attngen::codegen {

// A thread block covers 32 x 8 elements of a two-dimensional tile.
inline constexpr int tile_x = 32;
inline constexpr int tile_y = 8;

// Threads over 32 x 8 tiles of the stage's dimensions `x` and `y`, thread blocks over the tiles and
// `outer` (one dimension, or two fused). Tails are guarded: these stages read unclamped inputs.
// Returns the innermost thread variable, for stages computed per thread.
Halide::Var gpu_tiles(Halide::Stage stage, Halide::VarOrRVar x, Halide::VarOrRVar y,
                      const std::vector<Halide::VarOrRVar>& outer);

// The same over a Func's dimensions in order: the first two tiled, the rest across blocks.
Halide::Var gpu_tiles(Halide::Func f);

// A forward projection's matrix product: each thread computes a few rows of one output feature, their
// sums in registers over the whole input. Tiles run past the ends (the algorithm clamps its reads). W
// is transposed once so that a warp's 32 features read one coalesced run per input.
void schedule_linear_gpu(linear_funcs& f, const module_algorithm& m);

}  // namespace attngen::codegen
