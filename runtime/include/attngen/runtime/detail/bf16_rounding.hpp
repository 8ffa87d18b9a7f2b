#pragma once
// Float to bf16 bits, rounded to nearest even: the runtime's own loops (a KV cache's appends, merged
// results) and the tensor-core tile code's host implementation round the same way.

#include <bit>
#include <cmath>
#include <cstdint>

namespace attngen::detail {

// A NaN is kept a NaN (quieted): rounding could carry its payload into infinity.
inline std::uint16_t bf16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return std::uint16_t((bits >> 16) | 0x0040);
  return std::uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

}  // namespace attngen::detail
