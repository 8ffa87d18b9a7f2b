#pragma once
/// The AMX tile instructions the tile code uses, on plain memory, as Intel's ISA reference defines
/// them: what the tests run the tile code with on any CPU (hardware_tiles.hpp is the real thing).
/// Every tile is configured as 16 rows of 64 bytes.

#include <cstdint>
#include <cstring>

#include "attngen/amx/call.hpp"

namespace attngen::amx {
namespace {

class emulated_tiles {
 public:
  void configure() {}
  void release() {}
  template <int T>
  void zero() {
    std::memset(tile_[T], 0, tile_bytes);
  }
  /// Tile T's 16 rows of 64 bytes from `rows`, `stride` bytes apart (tileloadd).
  template <int T>
  void load(const void* rows, std::int64_t stride) {
    for (int r = 0; r < 16; ++r) std::memcpy(tile_[T] + 64 * r, static_cast<const unsigned char*>(rows) + r * stride, 64);
  }
  template <int T>
  void store(void* rows, std::int64_t stride) const {
    for (int r = 0; r < 16; ++r) std::memcpy(static_cast<unsigned char*>(rows) + r * stride, tile_[T] + 64 * r, 64);
  }
  /// C (16 x 16 f32) += A (16 x 32 bf16) times B (16 rows of 16 bf16 pairs): C[m][n] gains
  /// A[m][2k] B[k][2n] + A[m][2k + 1] B[k][2n + 1] for each k (tdpbf16ps).
  template <int C, int A, int B>
  void dot() {
    float c[16][16], a[16][32], b[16][32];
    std::memcpy(c, tile_[C], tile_bytes);
    widen(tile_[A], a);
    widen(tile_[B], b);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n)
        for (int k = 0; k < 16; ++k) c[m][n] += a[m][2 * k] * b[k][2 * n] + a[m][2 * k + 1] * b[k][2 * n + 1];
    std::memcpy(tile_[C], c, tile_bytes);
  }

 private:
  static void widen(const unsigned char* tile, float (&values)[16][32]) {
    for (int n = 0; n < 16 * 32; ++n) {
      std::uint16_t bits;
      std::memcpy(&bits, tile + 2 * n, 2);
      const std::uint32_t wide = std::uint32_t(bits) << 16;
      std::memcpy(&values[n / 32][n % 32], &wide, 4);
    }
  }
  alignas(64) unsigned char tile_[8][tile_bytes] = {};
};

}  // namespace
}  // namespace attngen::amx
