#include "attngen/codegen/schedule_cpu.hpp"

#include <algorithm>

namespace attngen::codegen {

using namespace Halide;

namespace {

int float_lanes(const Target& target) {
  if (target.has_feature(Target::AVX512)) return 16;
  if (target.has_feature(Target::AVX) || target.has_feature(Target::AVX2)) return 8;
  return 4;
}

// Widest power of two not above both the target's lanes and the dimension.
int vector_width_for(int extent, int lanes) {
  int width = 1;
  while (width * 2 <= std::min(extent, lanes)) width *= 2;
  return width;
}

}  // namespace

blocking cpu_blocking(const attention_desc&, const Target& target) {
  blocking tiles;
  tiles.lanes = float_lanes(target);
  tiles.key_block = 4 * tiles.lanes;
  tiles.query_tile = 16;
  return tiles;
}

void schedule_cpu(attention_algorithm& a, const Target& target) {
  const int lanes = a.tiles.lanes;
  const int v_lanes = vector_width_for(a.desc.effective_v_head_dim(), lanes);
  const int tile_rows = a.tiles.query_tile;
  Var hb("hb"), jo("jo"), ji("ji"), io("io"), iv("iv"), eo("eo"), ei("ei");
  (void)target;

  // One task per (head, batch); query tiles run inside it so scratch is per tile, not per head.
  a.output.split(a.i, a.it, a.ii, tile_rows, TailStrategy::GuardWithIf)
      .reorder(a.e, a.ii, a.it, a.h, a.b)
      .fuse(a.h, a.b, hb)
      .parallel(hb)
      .vectorize(a.e, v_lanes);
  if (a.desc.lse_output) {
    // The log-sum-exp shares the output's loop nest, so the state computed per tile serves both.
    a.lse.split(a.i, a.it, a.ii, tile_rows, TailStrategy::GuardWithIf)
        .reorder(a.ii, a.it, a.h, a.b)
        .fuse(a.h, a.b, hb)
        .parallel(hb);
    a.lse.compute_with(a.output, a.it);
  }

  a.normalized.compute_at(a.output, a.it).vectorize(a.e, v_lanes);
  a.state.compute_at(a.output, a.it).vectorize(a.e, v_lanes);
  a.state.update().reorder(a.e, a.ii, a.key_blocks, a.it, a.h, a.b).vectorize(a.e, v_lanes);

  const LoopLevel per_block(a.state, a.key_blocks);
  a.query_tile.compute_at(a.output, a.it).vectorize(a.d, vector_width_for(a.desc.qk_head_dim, lanes));
  a.key_block_t.compute_at(per_block).vectorize(a.j, lanes);

  a.dot.compute_at(per_block).vectorize(a.j, lanes);
  a.dot.update()
      .split(a.j, jo, ji, lanes)
      .split(a.ii, io, iv, 4)
      .reorder(ji, iv, jo, a.qk_reduction, io)
      .vectorize(ji)
      .unroll(iv)
      .unroll(jo);
  a.score.compute_at(per_block).vectorize(a.j, lanes);
  a.block_max_lanes.compute_at(per_block).vectorize(a.lane);
  a.block_max_lanes.update().reorder(a.lane, a.lane_reduction, a.ii).vectorize(a.lane);
  a.block_max.compute_at(per_block);
  a.weight.compute_at(per_block).vectorize(a.j, lanes);
  a.block_sum_lanes.compute_at(per_block).vectorize(a.lane);
  a.block_sum_lanes.update().reorder(a.lane, a.lane_reduction, a.ii).vectorize(a.lane);
  a.block_sum.compute_at(per_block);
  a.block_pv.compute_at(per_block).vectorize(a.e, v_lanes);
  a.block_pv.update()
      .split(a.e, eo, ei, v_lanes)
      .split(a.ii, io, iv, 2)
      .reorder(ei, iv, eo, a.pv_reduction, io)
      .vectorize(ei)
      .unroll(iv);
}

}  // namespace attngen::codegen
