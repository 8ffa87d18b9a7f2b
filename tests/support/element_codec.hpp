#pragma once
/// Test data is held as float; kernels take bytes of their element type. One place converts.

#include <cstdint>
#include <vector>

#include "attngen/dtype.hpp"

namespace attngen::testing {

/// Bytes of `values` in `type` (f32, f16 or bf16; values are expected to be exact in that type).
std::vector<std::uint8_t> encode(dtype type, const std::vector<float>& values);

/// Floats from `count` elements of `type` at `bytes`.
std::vector<float> decode(dtype type, const void* bytes, std::size_t count);

}  // namespace attngen::testing
