#include "random_data.hpp"

#include <cstdint>
#include <cstring>

namespace attngen::bench {

void fill_uniform(void* data, std::size_t elements, dtype type, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto* bytes = static_cast<std::uint8_t*>(data);
  for (std::size_t n = 0; n < elements; ++n) {
    const float x = uniform(rng);
    if (type == dtype::bf16) {
      std::uint32_t bits;
      std::memcpy(&bits, &x, 4);
      const std::uint16_t half = bits >> 16;
      std::memcpy(bytes + 2 * n, &half, 2);
    } else if (type == dtype::f16) {
      const _Float16 half = static_cast<_Float16>(x);
      std::memcpy(bytes + 2 * n, &half, 2);
    } else {
      std::memcpy(bytes + 4 * n, &x, 4);
    }
  }
}

}  // namespace attngen::bench
