#include "attngen/codegen/schedule_cpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace attngen::codegen {

using namespace Halide;

namespace {

// Widest power of two not above both the target's lanes and the dimension.
int vector_width_for(int extent, int lanes) {
  int width = 1;
  while (width * 2 <= std::min(extent, lanes)) width *= 2;
  return width;
}

// Vectors per register tile row, without exceeding the dimension: 4 rows x 4 vectors of accumulators
// fill half of AVX-512's 32 registers; with 16 registers (AVX2, SSE) 4 x 4 spilled, so 4 x 2.
int vectors_per_tile(int extent, int width, int most) { return std::max(1, std::min(most, extent / width)); }
int most_vectors_per_row(int lanes) { return lanes >= 16 ? 4 : 2; }

// Key vectors per q.k register tile with keys in lanes. AVX2's 16 registers take 4 x 3 accumulators
// (with one broadcast and 3 vectors of K) where a block holds 32 or more vectors, its last tile then
// shifting inwards over 8 keys of 256 already computed, and head_dim is long enough to amortise
// storing 12 vectors per tile. Against 4 x 2, paired runs on one Zen 3 thread, time: D128 B1 H32/8
// L512 x 2048 0.84-0.94x, H8 L2048 0.82-0.84x; D64 B2 H16 L1024 1.09-1.12x; causal D128 (128-key
// blocks, 16 keys of 128 computed twice) 1.00-1.01x.
int qk_key_vectors(const attention_desc& desc, int key_block, int lanes) {
  if (lanes == 8 && key_block / lanes >= 32 && desc.qk_head_dim >= 128) return 3;
  return vectors_per_tile(key_block, lanes, most_vectors_per_row(lanes));
}

// Rows per register tile: 4 where the tile's rows allow.
int register_tile_rows(int tile_rows) { return tile_rows % 4 == 0 ? 4 : tile_rows % 2 == 0 ? 2 : 1; }

// K (and the query tile's layout) as the q.k layout wants them; V as float where blocking::stage_values asks.
void stage_keys(attention_algorithm& a, const LoopLevel& task) {
  const int lanes = a.tiles.lanes;
  switch (a.tiles.qk) {
    case qk_layout::keys_in_lanes:
      if (a.tiles.bf16_dot_products) {
        // K and V in bf16 pairs once per task: a pair of a key's elements (of a feature's keys for V)
        // is one 32-bit lane of a vdpbf16ps operand, a vector of them one load.
        // Padded as K is below.
        a.key_pairs.compute_at(task)
            .bound(a.j, 0, a.tiles.key_block)
            .bound_storage(a.j, a.tiles.key_block + lanes)
            .bound(a.p, 0, 2)
            .vectorize(a.p)
            .vectorize(a.j, lanes);
        a.value_pairs.compute_at(task)
            .bound(a.pair, 0, a.tiles.key_block / 2)
            .bound(a.p, 0, 2)
            .vectorize(a.p)
            .vectorize(a.e, vector_width_for(a.desc.effective_v_head_dim(), lanes));
        break;
      }
      // K transposed once per task (its kv head's keys), not per tile and block: O(Lk * D) per task.
      // Its block dimension pinned: Halide otherwise widens it past the block with staged reads at the
      // key (blocking::stage_key_reads), unaligning every load of it. Its rows padded by a vector, so
      // that a register tile's rows of 256 or 512 keys do not share L1 sets: prefill_gqa 164-170
      // against 169-172 ms, prefill_gqa_causal 23.3-24.3 against 24.0-25.7 (4 interleaved runs).
      a.key_block.compute_at(task)
          .bound(a.j, 0, a.tiles.key_block)
          .bound_storage(a.j, a.tiles.key_block + lanes)
          .vectorize(a.j, lanes);
      break;
    case qk_layout::rows_in_lanes:
      // K copied once per task into dense rows (stored rows lie KVH x D apart, often 4 KiB, one L1
      // set; reading them in place measured 6% slower at B4 H16 D64 L512 causal). The query tile
      // is stored rows innermost, so a head_dim step loads the tile's rows as vectors.
      a.key_block.compute_at(task)
          .reorder_storage(a.d, a.j)
          .reorder(a.d, a.j)
          .vectorize(a.d, vector_width_for(a.desc.qk_head_dim, lanes));
      a.query_tile.reorder_storage(a.ii, a.d);
      break;
    case qk_layout::along_head_dim:
      // K read where it is.
      return;
  }
  if (a.tiles.stage_values) {
    a.value_block.compute_at(task)
        .bound(a.j, 0, a.tiles.key_block)
        .reorder_storage(a.e, a.j)
        .reorder(a.e, a.j)
        .vectorize(a.e, vector_width_for(a.desc.effective_v_head_dim(), lanes));
  }
}

// A register tile's sums over `r` in pairs, each vector lane adding its pair's two products in one
// vector reduction (vdpbf16ps with bf16 dot products): pairs innermost, then `lanes` of `v`, the
// tile's vectors of `v` and its `rows` unrolled.
void schedule_pair_sums(Stage update, const RVar& r, const Var& v, const Var& rows, int lanes, TailStrategy tail) {
  RVar pair("pair"), in_pair("in_pair");
  Var vo("vo"), vi("vi");
  update.split(v, vo, vi, lanes, tail)
      .split(r, pair, in_pair, 2)
      .reorder(in_pair, vi, vo, rows, pair)
      .atomic()
      .vectorize(in_pair)
      .vectorize(vi)
      .unroll(vo)
      .unroll(rows);
}

// Register tiles of up to 4 rows x 4 key vectors over K transposed.
void schedule_scores_keys_in_lanes(attention_algorithm& a, block_funcs& f, const LoopLevel& per_block) {
  const int lanes = a.tiles.lanes;
  const int rows_per_register_tile = register_tile_rows(a.tiles.rows(a.desc));
  const int key_vectors = a.tiles.qk_key_group / lanes;
  Var jo("jo"), jm("jm"), ji("ji"), jv("jv"), io("io"), iv("iv");
  // Each register tile's q.k accumulator (dot, computed at that tile) is exactly the tile, with the
  // head_dim reduction innermost. Rows vary fastest, so consecutive tiles read the same slice of K.
  f.score.compute_at(per_block)
      .split(a.j, jo, jv, key_vectors * lanes)
      .split(a.ii, io, iv, rows_per_register_tile)
      .reorder(jv, iv, io, jo)
      .vectorize(jv, lanes);
  f.dot.compute_at(f.score, io)
      .bound_extent(a.j, key_vectors * lanes)
      .bound_extent(a.ii, rows_per_register_tile)
      .vectorize(a.j, lanes);
  if (a.tiles.bf16_dot_products) {
    // Each lane sums a pair of head_dim elements' products.
    schedule_pair_sums(f.dot.update(), a.qk_reduction.x, a.j, a.ii, lanes, TailStrategy::Auto);
    return;
  }
  f.dot.update()
      .split(a.j, jm, ji, lanes)
      .reorder(ji, jm, a.ii, a.qk_reduction)
      .vectorize(ji)
      .unroll(jm)
      .unroll(a.ii);
}

// Register tiles of every row (in lanes) x a few keys, each key's element a broadcast operand.
void schedule_scores_rows_in_lanes(attention_algorithm& a, block_funcs& f, const LoopLevel& per_block) {
  const int lanes = a.tiles.lanes;
  const int keys_per_register_tile = a.tiles.qk_key_group;
  Var jo("jo"), jv("jv"), io("io"), iv("iv");
  f.score.compute_at(per_block)
      .reorder_storage(a.ii, a.j)
      .split(a.j, jo, jv, keys_per_register_tile)
      .reorder(a.ii, jv, jo)
      .vectorize(a.ii, lanes);
  f.dot.compute_at(f.score, jo)
      .reorder_storage(a.ii, a.j)
      .bound_extent(a.j, keys_per_register_tile)
      .vectorize(a.ii, lanes);
  f.dot.update()
      .split(a.ii, io, iv, lanes)
      .reorder(iv, io, a.j, a.qk_reduction)
      .vectorize(iv)
      .unroll(io)
      .unroll(a.j);
}

// q.k along head_dim over K as stored, every row of the tile at once, then a horizontal sum per key:
// with few rows per key (decoding) or few keys, transposing K would cost more than using it
// (measured: 68% of a decode call, plus freeing the staged copy).
void schedule_scores_along_head_dim(attention_algorithm& a, block_funcs& f, const LoopLevel& per_block) {
  const int lanes = a.tiles.lanes;
  const int tile_rows = a.tiles.rows(a.desc);
  const int qk_lanes = vector_width_for(a.desc.qk_head_dim, lanes);
  Var u("u");
  RVar rdo("rdo"), rdi("rdi");
  f.score.compute_at(per_block).vectorize(a.j, lanes);
  // One block: the staged reads at the key (stage_key_reads) would otherwise leave Halide a range of
  // blocks here, sized at run time (measured 1.5x slower decoding).
  f.dot.compute_at(per_block)
      .store_in(MemoryType::Stack)
      .bound(a.j, 0, a.tiles.key_block)
      .bound(a.ii, 0, tile_rows)
      .bound_extent(a.kb, 1);
  Func along_head_dim =
      f.dot.update().split(a.qk_reduction.x, rdo, rdi, qk_lanes, TailStrategy::GuardWithIf).rfactor(rdi, u);
  // No software prefetch: Halide's prefetch, of the next key blocks or of keys ahead, measured 20-35%
  // slower than the hardware prefetchers alone (decode_gqa, random data: 11.3-13.9 against 17.4 GB/s).
  // The horizontal sum as one vector reduction per key and row, not qk_lanes scalar adds.
  f.dot.update().atomic().vectorize(rdi);
  along_head_dim.vectorize(u);
  if (a.tiles.kv_heads_in_task) {
    // Each key's row of every kv head, one head after another: a token's whole row in order.
    f.dot.bound(a.g, 0, a.desc.effective_kv_heads());
    f.dot.update().reorder(rdi, a.ii, a.g, a.j);
    along_head_dim.compute_at(f.dot, a.g).reorder_storage(u, a.ii);
  } else if (a.tiles.queries_per_tile == 1) {
    // A kv group's heads of one query: every row of a key at once, each row's partial sums in their
    // own vector, so independent FMA chains, where one row after another is one chain of
    // head_dim / lanes FMAs (decode from L3: 53 against 68 GB/s). Tiles of several queries have rows
    // past Lq, which the reduction skips row by row: measured slower so (B16 H8 D64 L10 on one
    // thread: 162 against 124 us).
    f.dot.update().reorder(rdi, a.ii, a.j);
    along_head_dim.compute_at(f.dot, a.j).reorder_storage(u, a.ii);
  } else {
    along_head_dim.compute_at(f.dot, a.j);
  }
  along_head_dim.update().reorder(u, a.ii, rdo).vectorize(u).unroll(a.ii, register_tile_rows(tile_rows),
                                                                       TailStrategy::GuardWithIf);
}

// Block maxima and sums with keys in lanes: lane-parallel partials, then across the lanes as one
// vector reduction per row, not a scalar loop.
void schedule_block_softmax_keys_in_lanes(attention_algorithm& a, block_funcs& f, const LoopLevel& per_block) {
  for (Func partial : {f.block_max_lanes, f.block_sum_lanes}) {
    partial.compute_at(per_block).store_in(MemoryType::Stack).vectorize(a.lane);
    partial.update().reorder(a.lane, a.lane_reduction, a.ii).vectorize(a.lane);
  }
  for (Func total : {f.block_max, f.block_sum}) {
    total.compute_at(per_block).store_in(MemoryType::Stack);
    total.update().atomic().vectorize(a.lane_collapse.x);
  }
  if (f.sums_rounded_weights) return;  // the weights are made in value_weights
  f.weight.compute_at(per_block).vectorize(a.j, a.tiles.lanes);
}

// Block maxima and sums with rows in lanes: every step is an element-wise vector max or add.
void schedule_block_softmax_rows_in_lanes(attention_algorithm& a, block_funcs& f, const LoopLevel& per_block) {
  const int lanes = a.tiles.lanes;
  for (Func partial : {f.block_max_lanes, f.block_sum_lanes}) {
    partial.compute_at(per_block).store_in(MemoryType::Stack).reorder_storage(a.ii, a.lane).vectorize(a.ii, lanes);
    partial.update().reorder(a.ii, a.lane, a.lane_reduction).vectorize(a.ii, lanes);
  }
  for (Func total : {f.block_max, f.block_sum}) {
    total.compute_at(per_block).store_in(MemoryType::Stack).vectorize(a.ii, lanes);
    total.update().reorder(a.ii, a.lane_collapse.x).vectorize(a.ii, lanes);
  }
  f.weight.compute_at(per_block)
      .reorder_storage(a.ii, a.j)
      .reorder(a.ii, a.j)
      .vectorize(a.ii, lanes);
}

// Largest block-local scores (or weights) kept on the stack.
constexpr int largest_stack_block_bytes = 32 * 1024;

// One set of block Funcs: everything per key block at `per_block`, the weight x V accumulator per
// register tile of the state at `per_register_tile`; scratch too large for the stack lives at `heap_scratch`.
void schedule_block_funcs(attention_algorithm& a, block_funcs& f, const LoopLevel& heap_scratch,
                          const LoopLevel& per_block, const LoopLevel& per_register_tile) {
  const int lanes = a.tiles.lanes;
  const int v_dim = a.desc.effective_v_head_dim();
  const int v_lanes = vector_width_for(v_dim, lanes);
  const int v_vectors = vectors_per_tile(v_dim, v_lanes, most_vectors_per_row(lanes));
  const int tile_rows = a.tiles.rows(a.desc);
  // Halide would trim the key range of the last block (the masking select tells it which keys are
  // dead), making sizes dynamic and the scratch heap-allocated: the block-local ranges are declared
  // constant instead (their indices are clamped, so always safe).
  std::vector<Func> block_local_funcs = {f.score};
  if (!f.sums_rounded_weights) block_local_funcs.push_back(f.weight);
  if (f.value_weights.defined()) block_local_funcs.push_back(f.value_weights);
  for (Func block_local : block_local_funcs) block_local.bound(a.j, 0, a.tiles.key_block).bound(a.ii, 0, tile_rows);
  switch (a.tiles.qk) {
    case qk_layout::keys_in_lanes:
      schedule_scores_keys_in_lanes(a, f, per_block);
      schedule_block_softmax_keys_in_lanes(a, f, per_block);
      break;
    case qk_layout::rows_in_lanes:
      schedule_scores_rows_in_lanes(a, f, per_block);
      schedule_block_softmax_rows_in_lanes(a, f, per_block);
      break;
    case qk_layout::along_head_dim:
      schedule_scores_along_head_dim(a, f, per_block);
      schedule_block_softmax_keys_in_lanes(a, f, per_block);
      break;
  }
  // The masking passes over the blocks causality, the key length or the mask modifier cut, in the
  // order they are defined, vectorised along the scores' storage.
  const std::vector<RDom> masking_passes = f.score_masking_passes();
  for (std::size_t update = 0; update < masking_passes.size(); ++update) {
    const RVar key_in_block = masking_passes[update].x;
    if (a.tiles.qk == qk_layout::rows_in_lanes)
      f.score.update(int(update)).reorder(a.ii, key_in_block).vectorize(a.ii, lanes);
    else
      f.score.update(int(update)).reorder(key_in_block, a.ii).vectorize(key_in_block, lanes);
  }
  // Reads at the key alone, once per block: a loop of vector loads the block's stages read densely.
  for (Func read : f.key_reads)
    read.compute_at(per_block).store_in(MemoryType::Stack).bound(a.j, 0, a.tiles.key_block).vectorize(a.j, lanes);
  // Scores and weights of long blocks would take hundreds of KiB of stack: those are allocated on the
  // heap once per tile, or per split task when decoding (measured as fast), the rest on the stack
  // (tiny shapes run thousands of tasks). (Not once per (kv head, batch) task: Halide cannot prove
  // that one tile's slice serves every tile, since tiles split by an unproven size, and would
  // allocate all of them: +64 MiB and 20% slower at L2048.)
  const int heads_per_block = a.tiles.kv_heads_in_task ? a.desc.effective_kv_heads() : 1;
  for (Func block_local : block_local_funcs) {
    const int block_bytes = a.tiles.key_block * tile_rows * heads_per_block * block_local.output_types()[0].bytes();
    if (block_bytes > largest_stack_block_bytes)
      block_local.store_in(MemoryType::Heap).store_at(heap_scratch);
    else
      block_local.store_in(MemoryType::Stack);
  }
  Var em("em"), ei("ei");
  if (a.tiles.kv_heads_in_task) {
    for (Func block_local : {f.block_max, f.block_sum, f.block_max_lanes, f.block_sum_lanes})
      block_local_funcs.push_back(block_local);
    for (Func block_local : block_local_funcs) block_local.bound(a.g, 0, a.desc.effective_kv_heads());
  }
  f.block_pv.compute_at(per_register_tile)
      .bound_extent(a.ii, register_tile_rows(tile_rows))
      .vectorize(a.e, v_lanes);
  // A fixed feature extent would read V past v_head_dim in a partial last tile: only when tiles divide it.
  if (v_dim % (v_vectors * v_lanes) == 0) f.block_pv.bound_extent(a.e, v_vectors * v_lanes);
  if (a.tiles.bf16_dot_products) {
    // The weights rounded once per block; each lane of weight x V then sums a pair of keys' products.
    f.value_weights.compute_at(per_block).vectorize(a.j, lanes);
    schedule_pair_sums(f.block_pv.update(), a.pv_reduction.x, a.e, a.ii, v_lanes, TailStrategy::GuardWithIf);
    return;
  }
  f.block_pv.update()
      .split(a.e, em, ei, v_lanes, TailStrategy::GuardWithIf)
      .reorder(ei, em, a.ii, a.pv_reduction)
      .vectorize(ei)
      .unroll(em)
      .unroll(a.ii);
}

// The run-time visibility table: once per call, tiles in parallel, keys in vector lanes.
void schedule_visibility_stages(visibility_stages& s) {
  Var tasks("visibility_tasks");
  s.table.compute_root().reorder(s.kb, s.it, s.g, s.b).fuse(s.it, s.g, tasks).fuse(tasks, s.b, tasks).parallel(tasks);
  s.lanes.compute_at(s.table, s.kb).vectorize(s.lane);
  s.lanes.update().vectorize(s.lane);
}

}  // namespace

int qk_register_tile_keys(const attention_desc& desc, const blocking& tiles) {
  switch (tiles.qk) {
    case qk_layout::keys_in_lanes:
      return qk_key_vectors(desc, tiles.key_block, tiles.lanes) * tiles.lanes;
    case qk_layout::rows_in_lanes:
      // As many accumulators as a keys-in-lanes tile's 4 rows x most_vectors_per_row: 16 with AVX-512's
      // 32 registers (against 8, 2 interleaved runs: prefill_chunk 0.67-0.68 -> 0.70 of peak,
      // prefill_mha_causal -1.5% time, ragged_prefill within noise); 8 with 16 (more spilled on AVX2).
      return std::max(1, 4 * most_vectors_per_row(tiles.lanes) / (tiles.rows(desc) / tiles.lanes));
    case qk_layout::along_head_dim: break;
  }
  return 1;
}

blocking cpu_blocking(const attention_desc& desc, const Target& target) {
  blocking tiles;
  tiles.lanes = target.natural_vector_size(Float(32));
  // 128 keys amortise the per-block merge (one exp per row and feature vector); the variants for
  // longer key ranges take longer blocks.
  tiles.key_block = 8 * tiles.lanes;
  // About 16 rows per tile, a multiple of the 4-row register tile where the group size allows.
  const int group = desc.group_size();
  tiles.queries_per_tile = std::max(1, 16 / group);
  while ((tiles.queries_per_tile * group) % 4 != 0 && tiles.queries_per_tile * group < 16) ++tiles.queries_per_tile;
  tiles.qk_key_group = qk_register_tile_keys(desc, tiles);
  tiles.lse_in_output = true;
  return tiles;
}

void schedule_cpu(attention_algorithm& a) {
  const int lanes = a.tiles.lanes;
  const int v_dim = a.desc.effective_v_head_dim();
  const int v_lanes = vector_width_for(v_dim, lanes);
  const int v_vectors = vectors_per_tile(v_dim, v_lanes, most_vectors_per_row(lanes));
  const int group = a.desc.group_size();
  const int tile_queries = a.tiles.queries_per_tile;
  const int tile_rows = a.tiles.rows(a.desc);
  const bool split_keys = a.tiles.split_per_block;
  // Split states are computed outside the (kv head, batch) tasks, where no staged K could live.
  if (split_keys && a.tiles.qk != qk_layout::along_head_dim)
    throw std::logic_error("schedule_cpu: key splits need q.k along head_dim");
  if (a.lse.defined()) throw std::logic_error("schedule_cpu: the log-sum-exp must be the output's second value");
  Var gb("gb"), gbo("gbo"), sgb("sgb"), m("m"), iq("iq"), io("io"), iv("iv"), eo("eo"), ev("ev");

  // One task per (kv head, batch): the group's heads share each K/V block. Heads split exactly into
  // groups (H is a multiple of the group size). Query tiles run inside the task, so scratch is per tile.
  // Tiny tasks are run several to a thread-pool task: handing out a task costs about as much as a
  // task of 10 queries x 10 keys (B16 H8 D64 L10: 89 against 67 us with 4 or more per task).
  // (A key length loaded from a buffer here hid from bounds inference that a task is one (kv head,
  // batch): every task computed every kv head, 8x the work of a paged prefill chunk.)
  const Expr pairs_per_task = a.sources.query_length * group * a.sources.key_bound();
  const Expr tasks_per_parallel_task = clamp(4096 / max(pairs_per_task, 1), 1, 8);
  // Query tiles split by a factor Halide cannot prove constant: with a constant one, loop partitioning
  // copies the whole tile body to give the last, partial tile its own (twice the code, for a guard
  // that costs one compare per row).
  a.output.split(a.h, a.g, m, group, TailStrategy::RoundUp)
      .split(a.i, a.it, iq, a.tile_queries_unproven, TailStrategy::GuardWithIf)
      .reorder(a.e, m, iq, a.it, a.g, a.b)
      .vectorize(a.e, v_lanes)
      .fuse(a.g, a.b, gb)
      .split(gb, gbo, gb, tasks_per_parallel_task, TailStrategy::GuardWithIf)
      .parallel(gbo);
  const LoopLevel task(a.output, gb);
  const LoopLevel tile(a.output, a.it);

  // One tile's queries; with key splits, every tile's at once (decoding: a few queries), since both
  // stages of the split states read them. The extents are pinned: with bottom-right causality and
  // Lq > Lk, Halide derives this region from the causal predicate and gives tiles that see no key a
  // negative extent (a negative allocation, then writes out of bounds).
  if (split_keys)
    a.query_tile.compute_root();
  else
    a.query_tile.compute_at(tile).store_in(MemoryType::Stack).bound_extent(a.it, 1);
  a.query_tile.bound_extent(a.ii, tile_rows).vectorize(a.d, vector_width_for(a.desc.qk_head_dim, lanes));
  stage_keys(a, task);

  // Per-tile results on the stack (tiny shapes run thousands of tasks, and heap allocations were a
  // large part of each); stack allocations need constant extents, so the tile's are stated.
  std::vector<Func> per_tile = {a.normalized};
  if (split_keys) {
    per_tile.push_back(a.merged);
    a.merged_max.compute_at(tile).store_in(MemoryType::Stack).bound_extent(a.ii, tile_rows).bound_extent(a.it, 1);
  } else {
    per_tile.push_back(a.state);
  }
  for (Func f : per_tile)
    f.compute_at(tile)
        .store_in(MemoryType::Stack)
        .bound(a.e, 0, v_dim)
        .bound_extent(a.ii, tile_rows)
        .bound_extent(a.it, 1);
  a.normalized.vectorize(a.e, v_lanes);
  if (split_keys) {
    // Flash-decoding: one task per (key split, kv head, batch), each split's state kept for the merge
    // (a few rows x Dv per task), so a handful of kv heads still keeps every thread streaming K/V.
    a.state.compute_root();
    // Every kv head inside the split's task, where its blocks' stages cover them all.
    if (a.tiles.kv_heads_in_task) a.state.reorder(a.it, a.g, a.s, a.b).fuse(a.s, a.b, sgb).parallel(sgb);
    else a.state.fuse(a.s, a.g, sgb).fuse(sgb, a.b, sgb).parallel(sgb);
    a.merged.vectorize(a.e, v_lanes);
    a.merged_max.update().reorder(a.ii, a.splits);
    a.merged.update().reorder(a.e, a.splits).vectorize(a.e, v_lanes, TailStrategy::GuardWithIf);
  } else {
    a.state.bound(a.s, 0, 1);
  }
  // The state's stages run over register tiles of 4 rows x up to 4 vectors of features, so each
  // tile's weight x V accumulator (block_pv, computed at that tile) is exactly the tile and stays in
  // registers. Rows vary fastest, so consecutive tiles read the same slice of V.
  std::vector<Stage> state_stages = {Stage(a.state)};
  if (!split_keys) state_stages.push_back(a.state.update());
  for (Stage stage : state_stages) {
    stage.split(a.e, eo, ev, v_vectors * v_lanes, TailStrategy::GuardWithIf)
        .split(a.ii, io, iv, register_tile_rows(tile_rows))
        .vectorize(ev, v_lanes);
  }
  a.state.reorder(ev, iv, io, eo);
  if (!split_keys) a.state.update().reorder(ev, iv, io, eo, a.key_blocks, a.it);

  // The block Funcs are computed per block: per key split's tile in the state itself, or per block of
  // the state's update (a first block the state starts from, per tile in its first stage). (A loop
  // level names a loop in every stage of the state; `io` lands in the ones that read blocks.)
  if (split_keys && a.tiles.kv_heads_in_task) {
    const LoopLevel split_task(a.state, sgb);
    schedule_block_funcs(a, a.blocks, split_task, split_task, LoopLevel(a.state, io));
    // The split's values staged once (in the cache's element type where value_elements is defined),
    // read in the cache's order (each key's row of every kv head) and stored by kv head, so that the
    // weight x V register tiles read each head's rows densely.
    Func staged_values = a.value_elements.defined() ? a.value_elements : a.value_block;
    staged_values.compute_at(split_task)
        .store_in(MemoryType::Stack)
        .bound(a.j, 0, a.tiles.key_block)
        .bound(a.g, 0, a.desc.effective_kv_heads())
        .bound(a.e, 0, v_dim)
        .reorder_storage(a.e, a.j, a.g)
        .reorder(a.e, a.g, a.j)
        .vectorize(a.e, v_lanes);
    if (a.value_elements.defined())
      a.value_elements.update().reorder(a.e, a.g, a.staged_values.x).vectorize(a.e, v_lanes);
    if (a.clamped_keys.defined())
      a.clamped_keys.compute_at(split_task).bound(a.j, 0, a.tiles.key_block).vectorize(a.j, lanes);
    if (a.split_is_seen.defined()) a.split_is_seen.compute_root();
  } else if (split_keys) {
    schedule_block_funcs(a, a.blocks, LoopLevel(a.state, sgb), LoopLevel(a.state, a.it), LoopLevel(a.state, io));
    if (a.split_is_seen.defined()) a.split_is_seen.compute_root();
  } else {
    schedule_block_funcs(a, a.blocks, tile, LoopLevel(a.state, a.key_blocks), LoopLevel(a.state, io));
    if (a.first_block.score.defined())
      schedule_block_funcs(a, a.first_block, tile, LoopLevel(a.state, a.it), LoopLevel(a.state, io));
  }

  if (a.visibility_in_pipeline.table.defined()) schedule_visibility_stages(a.visibility_in_pipeline);
}

void schedule_visibility_table_cpu(visibility_table_algorithm& t) { schedule_visibility_stages(t.stages); }

}  // namespace attngen::codegen
