#include "attngen/codegen/visibility_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attngen::codegen {

using namespace Halide;

bool needs_visibility_table(const attention_desc& desc) {
  return desc.has_mask_mod() && (detail::reads(desc.mask_modifier, expr_op::tensor_read) ||
                                 detail::reads(desc.mask_modifier, expr_op::scalar));
}

int visibility_table_heads(const attention_desc& desc) {
  return detail::reads(desc.mask_modifier, expr_op::head) ? desc.effective_kv_heads() : 1;
}

visibility_stages define_visibility_stages(const attention_desc& desc, const capture_params& captures,
                                           const visibility_inputs& inputs) {
  visibility_stages s;
  const int group = desc.group_size(), lanes = inputs.lanes;
  const bool per_head = detail::reads(desc.mask_modifier, expr_op::head);
  const Expr tile_queries = inputs.tile_queries, block_keys = inputs.block_keys;
  const Expr query_length = inputs.query_length, key_length = inputs.key_length;
  const Expr visible_bit = cast<uint8_t>(some_key_visible), hidden_bit = cast<uint8_t>(some_key_hidden);
  const Expr no_bits = cast<uint8_t>(0);
  const RDom cells(0, per_head ? tile_queries * group : tile_queries, 0, (block_keys + lanes - 1) / lanes, "rvis");
  const Expr row = cells.x, key_in_block = cells.y * lanes + s.lane;
  const Expr key = s.kb * block_keys + key_in_block;
  const Expr query = s.it * tile_queries + (per_head ? row / group : row);
  const Expr head = per_head ? s.g * group + row % group : Expr(0);
  Expr in_range = key < key_length && query < query_length;
  // A grid whose blocks are not whole vectors (a target's lanes above the finest target's block).
  if (!Internal::can_prove(block_keys % lanes == 0)) in_range = in_range && key_in_block < block_keys;
  // Keys gathered: as a clamped vector of consecutive keys, loop partitioning copied the table's code
  // for the last block, 3-4% of the generation time of example 03's kernel and 5-7% with every
  // run-time input. Measured as fast within 2% (example 03's kernel, B1 L2048 and decoding, AVX2
  // and AVX-512).
  const Expr gathered_key = gathered_index(key, key_length, inputs.unproven_zero);
  const modifier_leaves& origin = inputs.origin;
  const bool placed = origin.query.defined();
  const Expr query_clamped = clamp(query, 0, query_length - 1);
  const modifier_leaves at{Expr(),
                           s.b,
                           head,
                           placed ? query_clamped + origin.query : query_clamped,
                           placed ? gathered_key + origin.key : gathered_key,
                           placed ? origin.query_length : query_length,
                           placed ? origin.key_length : key_length};
  const Expr visible = lower_modifier(desc.mask_modifier, desc.captures, captures, at);
  s.lanes = Func("block_visibility_lanes");
  s.lanes(s.lane, s.kb, s.it, s.g, s.b) = no_bits;
  s.lanes(s.lane, s.kb, s.it, s.g, s.b) =
      s.lanes(s.lane, s.kb, s.it, s.g, s.b) | select(!in_range, no_bits, visible, visible_bit, hidden_bit);
  const RDom across_lanes(0, lanes, "rvl");
  const Expr lane_bits = s.lanes(across_lanes, s.kb, s.it, s.g, s.b);
  s.table = Func("block_visibility_table");
  s.table(s.kb, s.it, s.g, s.b) = maximum(lane_bits & visible_bit) | maximum(lane_bits & hidden_bit);
  return s;
}

std::vector<Argument> visibility_table_algorithm::arguments() const {
  std::vector<Argument> args;
  if (positions.defined()) args.push_back(positions);
  for (const Argument& capture : captures.arguments()) args.push_back(capture);
  for (const Param<int32_t>& size : {query_length, key_length, tile_queries, block_keys}) args.push_back(size);
  return args;
}

visibility_layout visibility_table_layout(const std::vector<visibility_grid>& target_tiles) {
  visibility_layout layout{target_tiles.at(0), {}};
  visibility_grid& finest = layout.finest;
  for (const visibility_grid& t : target_tiles) {
    if (t.queries % finest.queries != 0 && finest.queries % t.queries != 0)
      throw std::logic_error("tiles of " + std::to_string(t.queries) + " and " + std::to_string(finest.queries) +
                             " queries: neither is a multiple of the other");
    if (t.keys % finest.keys != 0 && finest.keys % t.keys != 0)
      throw std::logic_error("blocks of " + std::to_string(t.keys) + " and " + std::to_string(finest.keys) +
                             " keys: neither is a multiple of the other");
    finest.queries = std::min(finest.queries, t.queries);
    finest.keys = std::min(finest.keys, t.keys);
  }
  for (const visibility_grid& t : target_tiles) layout.ratios.push_back({t.queries / finest.queries, t.keys / finest.keys});
  return layout;
}

visibility_table_algorithm define_visibility_table(const attention_desc& desc, int lanes) {
  visibility_table_algorithm t;
  t.captures = capture_params::declare(desc.captures);
  // The runtime calls the part with at least one query: min(Lq, 0) is zero, which Halide cannot prove
  // of a scalar argument.
  visibility_inputs inputs{t.tile_queries, t.block_keys, t.query_length, t.key_length, min(t.query_length, 0), lanes};
  if (desc.global_positions) {
    t.positions = declare_positions();
    inputs.origin = positions_origin(t.positions);
  }
  t.stages = define_visibility_stages(desc, t.captures, inputs);
  return t;
}

}  // namespace attngen::codegen
