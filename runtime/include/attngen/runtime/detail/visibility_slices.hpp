#pragma once
/// Used by generated kernel wrappers (through the runtime) and the JIT tests: a kernel's run-time
/// visibility table (codegen's visibility_table.hpp) is computed on the finest tiles and blocks of
/// the kernel's CPU targets, and each target's variant reads a slice of it on the target's own tiles.

#include <algorithm>
#include <cstdint>

namespace attngen::detail {

/// A dense uint8 table (B, heads, tiles, blocks) of visibility bits.
struct visibility_table_extents {
  std::int64_t batch = 0, heads = 0, tiles = 0, blocks = 0;
};

/// One target's tiles and blocks, in tiles and blocks of the finest grid.
struct visibility_ratio {
  int tiles = 1, blocks = 1;
};

/// Fills `slices`, a dense (B, targets x heads, tiles, blocks) table, from `finest` of extents
/// `finest_extents`: target t's slice (heads t x heads on) holds, from its first entry, one entry per
/// tile and block of that target, the or of the finest entries it spans (`ratios[t]` of each, fewer
/// at the last tile and block).
inline void fill_visibility_slices(const std::uint8_t* finest, const visibility_table_extents& finest_extents,
                                   const visibility_ratio* ratios, int targets, std::uint8_t* slices) {
  const visibility_table_extents& e = finest_extents;
  const std::int64_t plane = e.tiles * e.blocks;
  for (std::int64_t b = 0; b < e.batch; ++b)
    for (int t = 0; t < targets; ++t)
      for (std::int64_t g = 0; g < e.heads; ++g) {
        const std::uint8_t* from = finest + (b * e.heads + g) * plane;
        std::uint8_t* to = slices + ((b * targets + t) * e.heads + g) * plane;
        const visibility_ratio r = ratios[t];
        for (std::int64_t it = 0; it * r.tiles < e.tiles; ++it)
          for (std::int64_t kb = 0; kb * r.blocks < e.blocks; ++kb) {
            std::uint8_t bits = 0;
            for (std::int64_t y = it * r.tiles; y < std::min(e.tiles, (it + 1) * r.tiles); ++y)
              for (std::int64_t x = kb * r.blocks; x < std::min(e.blocks, (kb + 1) * r.blocks); ++x)
                bits |= from[y * e.blocks + x];
            to[it * e.blocks + kb] = bits;
          }
      }
}

}  // namespace attngen::detail
