#pragma once
/// Benchmark inputs: uniform random values in [-1, 1), written as f32 or bf16.

#include <cstddef>
#include <random>

#include "attngen/dtype.hpp"

namespace attngen::bench {

/// Fills `elements` values of `type` (f32 or bf16) at `data`.
void fill_uniform(void* data, std::size_t elements, dtype type, std::mt19937& rng);

}  // namespace attngen::bench
