#pragma once
/// How the attention algorithm runs on CPUs: tiling, vectorisation, parallelism.

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/visibility_table.hpp"

namespace attngen::codegen {

/// Tile sizes for a CPU target: vector width from the target's widest float vector, about 16 rows
/// of (query, group head) pairs per tile.
blocking cpu_blocking(const attention_desc& desc, const Halide::Target& target);

/// Keys one q.k register tile spans under `tiles` (the value of blocking::qk_key_group).
int qk_register_tile_keys(const attention_desc& desc, const blocking& tiles);

/// Schedules every stage of `a`, defined with a blocking for that CPU target. Parallel over
/// (kv head, batch), query tiles inside.
void schedule_cpu(attention_algorithm& a);

/// Schedules the visibility table's part for a CPU target: (tile, kv head, batch) in parallel, keys in
/// vector lanes.
void schedule_visibility_table_cpu(visibility_table_algorithm& t);

}  // namespace attngen::codegen
