#include "attngen/codegen/variants.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/targets.hpp"

namespace attngen::codegen {

namespace {
// Keys per split when decoding (flash-decoding), as one key block: Lk 4096 gives 8 splits per kv head,
// tasks for every thread even with one kv head (MQA) and one sequence. Longer blocks stream K and V
// in longer runs and merge less often. Measured at B1 H32 KVH8 D128 Lk4096, K/V from DRAM, caches laid
// out (B, KVH, L, D), GB/s for keys per block x blocks per split (3 runs): 128x2 24.1-25.5, 256x1
// 27.5-29.9, 512x1 28.3-32.1, 1024x1 27.7-29.0, 512x2 29.2-31.1. Laid out (B, L, KVH, D), where a
// kv head's key rows lie KVH x D apart, all of these give 17-19.5.
constexpr int decode_keys_per_split = 512;

// Keys whose K and V rows are this many bytes ahead of the key read are prefetched when decoding a
// cache token by token (kv_heads_in_task). decode_paged (B16 H32/8 D128, page 16, triad 37-42 GB/s),
// of triad without / with 8 KiB ahead: f32 0.58 / 0.73, bf16 0.33 / 0.58, int8 0.22 / 0.32; 4 and
// 16 KiB were within the run-to-run noise (+-20%) of 8; dense decoding per kv head gained nothing.
constexpr int decode_prefetch_bytes_ahead = 8192;

// A split whose values are staged (every kv head's, in the cache's type) holds at most this many bytes
// of them, so they stay in L2 (2 MiB on an Intel Xeon core, 1 MiB on AMD Zen 5): f32 decode_paged
// (KVH8 D128) on a 2-core Xeon, 256 keys per split against 512: 37.5-38.1 against 42.0-42.2 ms,
// decode_lengths 34.4-35.0 against 36.5-38.3; bf16 and int8 (1 MiB and 512 KiB at 512 keys) keep 512.
constexpr int decode_staged_values_bytes = 1 << 20;

// Fewer keys per split merge too often: 64 measured 44 ms against 30-34 for 512 and 128 within their
// spread (decode_paged f32 on AMD, 2026-11-25).
constexpr int decode_fewest_keys_per_split = 128;

int decode_keys_per_staged_split(const attention_desc& desc) {
  const int key_bytes = desc.effective_kv_heads() * desc.effective_v_head_dim() * size_of(desc.effective_kv_element());
  int keys = decode_keys_per_split;
  while (keys > decode_fewest_keys_per_split && keys * key_bytes > decode_staged_values_bytes) keys /= 2;
  return keys;
}

int decode_keys_prefetched_ahead(const attention_desc& desc) {
  const int row_bytes = desc.effective_kv_heads() * desc.qk_head_dim * size_of(desc.effective_kv_element());
  return std::max(1, decode_prefetch_bytes_ahead / row_bytes);
}

// Rows in lanes need whole vectors of rows: the fewest queries that give whole vectors, doubled
// until they give at least `rows`. Doubling (not stepping) keeps the tiles of a kernel's targets
// (lanes dividing each other) nested, as its visibility table needs (stepping gave 12 and 16
// queries in groups of 3 with 4 and 16 lanes).
int queries_for_rows_in_lanes(int group, int lanes, int rows) {
  int queries = lanes / std::gcd(lanes, group);
  while (queries * group < rows) queries *= 2;
  return queries;
}

// Rows of a short_queries tile. 32 against 16, 4 interleaved pairs: prefill_chunk (B1 H32/8 D128
// Lq512 Lk4096, paged) 81.6-83.3 against 84.8-86.5 ms; prefill_mha_causal, ragged_prefill, modules same.
constexpr int short_queries_rows = 32;

// Keys per short_queries block in a module's attention, at most (cpu_module_variant_blocking).
constexpr int module_short_queries_keys = 128;

// The fewest rows a rows-in-lanes tile fills well; single_query serves calls of fewer queries.
constexpr int rows_in_lanes_min_rows = 16;
}  // namespace

int single_query_threshold(const attention_desc& desc, const Halide::Target& target) {
  return queries_for_rows_in_lanes(desc.group_size(), cpu_blocking(desc, target).lanes, rows_in_lanes_min_rows);
}

blocking cpu_variant_blocking(const attention_desc& desc, const Halide::Target& target, kernel_variant variant) {
  blocking tiles = cpu_blocking(desc, target);
  switch (variant) {
    case kernel_variant::general:
      // Twice the rows: long sequences stream each task's K and V from L3 or DRAM once per tile, and
      // 32-row tiles halve that traffic (measured at B1 H8 D128 L16384 causal: 127 against 151 GFLOP/s).
      tiles.queries_per_tile *= 2;
      // Longer blocks merge less often. Measured at B1 H32 KVH8 D128, GFLOP/s for 128/256/512/1024
      // keys: L2048 183/191/197/194; causal L1024 169/173/170 (diagonal blocks cost more).
      tiles.key_block = (desc.is_causal() ? 16 : 32) * tiles.lanes;
      // Gathered, a captured tensor read at the key measured 1.4x slower here; clamped in the block, it
      // cost a copy of the block body for the last block (0.1 s of generation per target).
      tiles.stage_key_reads = true;
      break;
    case kernel_variant::short_queries:
      tiles.qk = qk_layout::rows_in_lanes;
      tiles.queries_per_tile = queries_for_rows_in_lanes(desc.group_size(), tiles.lanes, short_queries_rows);
      // 256 keys, measured in GFLOP/s for 64/256/512 keys: B4 H16 D64 L512 causal 134/140/123, B1 H16
      // D64 L2048 causal 152/166/160; without causality B2 H16 D64 L1024 173 (128 keys)/179/180.
      // A paged cache's short calls are prefill chunks and speculative steps against a longer cached
      // prefix: 512 keys, prefill_chunk (B1 H32/8 D128 Lq512 Lk4096) 76.5-79.6 against 80.7-83.0 ms,
      // 3 interleaved runs (prefill_mha_causal, Lk = Lq, 7.6-8.0 against 7.3-7.6 ms).
      tiles.key_block = (desc.is_paged() ? 32 : 16) * tiles.lanes;
      // A short call's rows see one to a few blocks, so the first merge is a good part of a tile's work.
      // Paired runs (2026-12-02, Zen 5), new / old time: prefill_mha_causal 0.95 (faster in 11 of 11
      // rounds), prefill_chunk 0.92 (5 of 6), ragged_prefill 0.90 (3 of 5); the variant's generation
      // time 0.92-1.03 -> 1.24-1.45 s at AVX-512.
      tiles.first_block_starts_state = true;
      // Rows in lanes: a captured tensor read at the query is a vector of rows. Gathered, measured as
      // fast as the dense loads (example 03's modifiers, B4 H8/2 D64 L256, 4 interleaved runs: 1.85-2.37
      // ms gathered, 2.14-3.62 ms dense).
      tiles.modifier_reads_gather = true;
      break;
    case kernel_variant::short_keys:
      // A handful of keys: transposing them is a gather per element, slower than q.k along head_dim
      // (measured at B16 H8 D64 L10: 243 against 220 us on one thread).
      tiles.key_block = tiles.lanes;
      tiles.qk = qk_layout::along_head_dim;
      // Blocks of one vector of keys merge at the cost of their products: skipping the first merge
      // measured 30% faster at B16 H8 D64 L10 (0.065 against 0.092 ms).
      tiles.first_block_starts_state = true;
      // Blocks of one vector of keys: a captured tensor read at the key, gathered, measured as fast as
      // the dense loads (example 03's modifiers, B16 H8/2 D64 L64, 4 interleaved runs: 1.08-1.29 ms
      // gathered, 1.10-1.31 ms dense).
      tiles.modifier_reads_gather = true;
      break;
    case kernel_variant::single_query:
      tiles.queries_per_tile = 1;
      tiles.qk = qk_layout::along_head_dim;
      tiles.key_block = decode_keys_per_split;
      tiles.split_per_block = true;
      tiles.stage_key_reads = true;
      // A KV cache holds a token's row of every kv head together: read per kv head, its rows lie
      // KVH x D apart, and decoding streamed 7.8 GB/s where reading every head's row in order
      // streamed 16.8 (B16 paged f32 H32 KVH8 D128, kv lengths 512-8192, triad 36 GB/s, JIT).
      tiles.kv_heads_in_task = desc.has_kv_lengths();
      if (tiles.kv_heads_in_task) {
        tiles.prefetch_keys_ahead = decode_keys_prefetched_ahead(desc);
        // A split's values as float are 2 MiB at KVH 8 D 128, past L2, whatever the cache's type; as stored,
        // decode_paged took (3 interleaved runs) int8 10.4-11.2 ms against 13.5-14.4, bf16 12.6-12.8
        // against 13.8-14.9, f32 the same.
        tiles.stage_value_elements = true;
        tiles.key_block = decode_keys_per_staged_split(desc);
      }
      break;
  }
  tiles.qk_key_group = qk_register_tile_keys(desc, tiles);
  tiles.visibility_slice = 0;
  tiles.bf16_dot_products =
      tiles.qk == qk_layout::keys_in_lanes && !tiles.split_per_block && takes_bf16_dot_products(desc, target);
  // V staged per task for the variants that stage K (the bf16 tier stages its pairs instead). Staged
  // against read in place (2 interleaved runs, 2026-11-27): prefill_chunk (paged, B1 H32/8 D128 Lq512
  // Lk4096) 0.45 -> 0.69 of peak, the page lookup per key and row having tripled weight x V's
  // instructions; dense with rows 4 KiB apart: ragged_prefill -15% time, long_causal -4%,
  // prefill_mha_causal -4%, prefill_gqa -2%; f16 V (Halide 14 widens f16 with integer code, not
  // vcvtph2ps): prefill_gqa_f16 228 GFLOP/s in place, 393 staged, f32 398.
  tiles.stage_values = tiles.qk != qk_layout::along_head_dim && !tiles.bf16_dot_products;
  // The f32 tiling serves bf16 dot products too. prefill_gqa_bf16 (B1 H32/8 D128 L2048, GFLOP/s):
  // 512-key blocks 729-737, 256 709-718, 1024 668-672; 64-row tiles 742 but causal 607-630 (632-636).
  return tiles;
}

std::vector<std::vector<visibility_grid>> cpu_variant_tiles(const attention_desc& desc,
                                                            const std::vector<Halide::Target>& kernel_targets) {
  std::vector<std::vector<visibility_grid>> tiles(kernel_variant_count);
  for (int v = 0; v < kernel_variant_count; ++v)
    for (const Halide::Target& target : kernel_targets) {
      const blocking b = cpu_variant_blocking(desc, target, kernel_variant(v));
      tiles[v].push_back({b.queries_per_tile, b.key_block});
    }
  return tiles;
}

blocking cpu_kernel_variant_blocking(const attention_desc& desc, const Halide::Target& target,
                                     const std::vector<Halide::Target>& kernel_targets, kernel_variant variant) {
  blocking tiles = cpu_variant_blocking(desc, target, variant);
  tiles.visibility_slice = int(std::find(kernel_targets.begin(), kernel_targets.end(), target) - kernel_targets.begin());
  if (tiles.visibility_slice == int(kernel_targets.size()))
    throw std::logic_error("target " + target.to_string() + " is not among the kernel's targets");
  return tiles;
}

blocking cpu_module_variant_blocking(const mha_desc& desc, const Halide::Target& target, kernel_variant variant) {
  blocking tiles = cpu_variant_blocking(desc.attention_operator(), target, variant);
  // A module's call is mostly its projections, so the first merge short_keys saves weighs less there
  // than the copy of the block stages it takes: a third of that variant's generation time (bf16 E512
  // H8/2 with every option, AVX2: 0.49-0.51 s without the copy, 0.77-0.82 s with it). Through the
  // JIT, that module's attention part took 0.102 ms without it against 0.077 ms at B16 L10 S10, and
  // the whole call 1.99 against 1.89 ms (min of 5 interleaved); at B4 L64 S64 2.53 against 2.47 ms.
  tiles.first_block_starts_state = false;
  // short_queries' key blocks of at most 128 keys: a module's self-attention is often of 128 tokens
  // or fewer, where AVX-512's 256-key blocks were half padding (module_self's attention part, B4 L128
  // E512 H8: 0.91-0.96 -> 0.78-0.86 ms, 2 interleaved runs; module_cross_gqa, Lk 1024, the same).
  if (variant == kernel_variant::short_queries)
    tiles.key_block = std::min(tiles.key_block, module_short_queries_keys);
  // A module's V is its projection's output, laid out for the attention: staging it measured no
  // faster (module_cross_gqa 13.9-14.4 against 13.4 ms, module_self within noise); f16 is still widened once.
  tiles.stage_values = tiles.stage_values && desc.attention_operator().effective_kv_element() == dtype::f16;
  return tiles;
}

}  // namespace attngen::codegen
