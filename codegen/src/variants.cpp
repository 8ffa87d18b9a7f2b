#include "attngen/codegen/variants.hpp"

#include "attngen/codegen/schedule_cpu.hpp"

namespace attngen::codegen {

blocking cpu_variant_blocking(const attention_desc& desc, const Halide::Target& target, kernel_variant variant) {
  blocking tiles = cpu_blocking(desc, target);
  switch (variant) {
    case kernel_variant::general: break;
    case kernel_variant::short_keys: tiles.key_block = tiles.lanes; break;
    case kernel_variant::single_query:
      tiles.queries_per_tile = 1;
      tiles.transpose_keys = false;
      break;
  }
  return tiles;
}

}  // namespace attngen::codegen
