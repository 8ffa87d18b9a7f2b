#include "attngen/codegen/variants.hpp"

#include <algorithm>

#include "attngen/codegen/schedule_cpu.hpp"

namespace attngen::codegen {

namespace {
// Keys per split when decoding (flash-decoding): Lk 4096 gives 16 splits per kv head, tasks for every
// thread even with one kv head (MQA) and one sequence; each split's merge costs a few rows x Dv against
// 256 keys of work. Measured at B1 H32 KVH8 D128 Lk4096: 256 and 512 keys per split are equal.
constexpr int decode_keys_per_split = 256;
}  // namespace

blocking cpu_variant_blocking(const attention_desc& desc, const Halide::Target& target, kernel_variant variant) {
  blocking tiles = cpu_blocking(desc, target);
  switch (variant) {
    case kernel_variant::general: break;
    case kernel_variant::short_keys:
      // A handful of keys: transposing them is a gather per element, slower than q.k along head_dim
      // (measured at B16 H8 D64 L10: 243 against 220 us on one thread).
      tiles.key_block = tiles.lanes;
      tiles.transpose_keys = false;
      break;
    case kernel_variant::single_query:
      tiles.queries_per_tile = 1;
      tiles.transpose_keys = false;
      tiles.key_blocks_per_split = std::max(1, decode_keys_per_split / tiles.key_block);
      break;
  }
  return tiles;
}

}  // namespace attngen::codegen
