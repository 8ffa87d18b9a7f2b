#include "support/element_codec.hpp"

#include <cstring>

namespace attngen::testing {

std::vector<std::uint8_t> encode(dtype type, const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes(values.size() * size_of(type));
  for (std::size_t n = 0; n < values.size(); ++n) {
    if (type == dtype::f32) {
      std::memcpy(&bytes[4 * n], &values[n], 4);
    } else if (type == dtype::bf16) {
      std::uint32_t bits;
      std::memcpy(&bits, &values[n], 4);
      const std::uint16_t half = bits >> 16;
      std::memcpy(&bytes[2 * n], &half, 2);
    } else {
      const _Float16 half = static_cast<_Float16>(values[n]);
      std::memcpy(&bytes[2 * n], &half, 2);
    }
  }
  return bytes;
}

std::vector<float> decode(dtype type, const void* data, std::size_t count) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  std::vector<float> values(count);
  for (std::size_t n = 0; n < count; ++n) {
    if (type == dtype::f32) {
      std::memcpy(&values[n], bytes + 4 * n, 4);
    } else if (type == dtype::bf16) {
      std::uint16_t half;
      std::memcpy(&half, bytes + 2 * n, 2);
      const std::uint32_t bits = std::uint32_t(half) << 16;
      std::memcpy(&values[n], &bits, 4);
    } else {
      _Float16 half;
      std::memcpy(&half, bytes + 2 * n, 2);
      values[n] = static_cast<float>(half);
    }
  }
  return values;
}

}  // namespace attngen::testing
