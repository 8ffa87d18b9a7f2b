#pragma once
// Reading and writing one element of a host tensor view of a float type (f32, f16, bf16) as float:
// what the runtime's own loops over tensors (appending to a KV cache, merging partial results) use.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "attngen/runtime/detail/bf16_rounding.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen::detail {

inline std::uint8_t* element_address(const tensor_view& t, std::int64_t offset) {
  return static_cast<std::uint8_t*>(t.data) + offset * size_of(t.type);
}

inline float load(dtype type, const std::uint8_t* p) {
  switch (type) {
    case dtype::f16: {
      _Float16 h;
      std::memcpy(&h, p, sizeof h);
      return h;
    }
    case dtype::bf16: {
      std::uint16_t bits;
      std::memcpy(&bits, p, sizeof bits);
      return std::bit_cast<float>(std::uint32_t(bits) << 16);
    }
    default: {
      float f;
      std::memcpy(&f, p, sizeof f);
      return f;
    }
  }
}

inline void store(dtype type, float value, std::uint8_t* p) {
  if (type == dtype::f16) {
    const _Float16 h = static_cast<_Float16>(value);
    std::memcpy(p, &h, sizeof h);
  } else if (type == dtype::bf16) {
    const std::uint16_t bits = bf16_bits(value);
    std::memcpy(p, &bits, sizeof bits);
  } else {
    std::memcpy(p, &value, sizeof value);
  }
}

}  // namespace attngen::detail
