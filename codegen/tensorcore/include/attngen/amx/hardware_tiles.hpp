#pragma once
/// The AMX tile instructions the tile code uses, as the CPU runs them (emulated_tiles.hpp defines
/// them for the tests). Only for code compiled with AMX-TILE and AMX-BF16 (NAME_amx.cpp's target
/// region), run on CPUs that have them and where the OS has granted the process the tile state
/// (attngen::detail::cpu_report::amx). Every tile is configured as 16 rows of 64 bytes.

#include <cstdint>

namespace attngen::amx {
namespace {

class hardware_tiles {
 public:
  void configure() {
    // The layout ldtilecfg reads (palette 1).
    struct alignas(64) {
      std::uint8_t palette, start_row, reserved[14];
      std::uint16_t bytes_per_row[16];
      std::uint8_t rows[16];
    } config = {};
    config.palette = 1;
    for (int t = 0; t < 8; ++t) {
      config.bytes_per_row[t] = 64;
      config.rows[t] = 16;
    }
    // GCC 12's _tile_loadconfig tells the compiler it reads 8 bytes: the rest of the stores may be dropped.
    __asm__ volatile("ldtilecfg %0" ::"m"(config));
  }
  void release() { __asm__ volatile("tilerelease"); }
  // The tile operands are immediates: the instructions are written here, as GCC's intrinsics take
  // tile numbers only as literals.
  template <int T>
  void zero() {
    __asm__ volatile("tilezero %%tmm%c0" ::"i"(T));
  }
  template <int T>
  void load(const void* rows, std::int64_t stride) {
    __asm__ volatile("tileloadd (%0,%1,1), %%tmm%c2" ::"r"(rows), "r"(stride), "i"(T) : "memory");
  }
  template <int T>
  void store(void* rows, std::int64_t stride) const {
    __asm__ volatile("tilestored %%tmm%c2, (%0,%1,1)" ::"r"(rows), "r"(stride), "i"(T) : "memory");
  }
  /// C += A B (tdpbf16ps; AT&T operand order).
  template <int C, int A, int B>
  void dot() {
    __asm__ volatile("tdpbf16ps %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
  }
};

}  // namespace
}  // namespace attngen::amx
