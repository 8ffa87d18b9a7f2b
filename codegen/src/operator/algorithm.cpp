#include "attngen/codegen/algorithm.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace attngen::codegen {

using namespace Halide;

namespace {

// Halide compiles with no-Inf/no-NaN assumptions, so masking uses finite sentinels: masked scores
// hold `masked_score`; block maxima are floored at the mask threshold, so a fully masked block gives
// exp(masked_score - mask_out_threshold) == 0 (Halide's exp underflows to exactly 0 there).
constexpr float masked_score = -std::numeric_limits<float>::max();
constexpr float score_floor = mask_out_threshold;
static_assert(masked_score <= masked_score_limit);

Expr negative_infinity() { return reinterpret(Float(32), Internal::make_const(UInt(32), 0xff800000u)); }

int mask_rank(mask_shape shape) {
  switch (shape) {
    case mask_shape::lq_lk: return 2;
    case mask_shape::h_lq_lk: return 3;
    case mask_shape::b_h_lq_lk:
    case mask_shape::b_1_lq_lk: return 4;
    case mask_shape::none: break;
  }
  return 0;
}

// The additive mask's value for (key, query, head, batch); indices already clamped into range.
Expr additive_mask_at(const ImageParam& mask, mask_shape shape, Expr key, Expr query, Expr head, Expr batch) {
  switch (shape) {
    case mask_shape::lq_lk: return mask(key, query);
    case mask_shape::h_lq_lk: return mask(key, query, head);
    case mask_shape::b_h_lq_lk: return mask(key, query, head, batch);
    case mask_shape::b_1_lq_lk: return mask(key, query, 0, batch);
    case mask_shape::none: break;
  }
  return Expr();
}

// True where the mask modifier hides the key from the query (indices clamped into range); reads at
// the key alone from `key_read` where given (modifier_leaves::key_read).
Expr modifier_hides(const attention_algorithm& a, Expr key_clamped, Expr query_clamped, Expr head, Expr batch,
                    std::function<Expr(int)> key_read = {}) {
  const modifier_leaves at = a.sources.leaves_at(Expr(), batch, head, query_clamped, key_clamped, std::move(key_read));
  return !lower_modifier(a.desc.mask_modifier, a.desc.captures, a.captures, at);
}

// True where the key is excluded for the query by its position or causality, or by the sources' mask
// (the mask modifier is the callers' to add).
Expr structurally_masked(const attention_algorithm& a, Expr key, Expr query, Expr key_clamped, Expr query_clamped,
                         Expr head, Expr batch) {
  const attention_sources& src = a.sources;
  Expr masked = key >= src.key_length;
  if (a.desc.is_causal()) {
    Expr after_diagonal = key > query + src.causal_offset;
    if (!Internal::is_const_zero(src.causally_free_keys)) after_diagonal = after_diagonal && key >= src.causally_free_keys;
    masked = masked || after_diagonal;
  }
  if (src.hidden.defined()) masked = masked || src.hidden(key_clamped, query_clamped, head, batch);
  return masked;
}

// Whether causality or the key length hides some key of block kb from some row of tile it: the
// structural rule at the block's last key and the tile's first query, where it is most likely to
// hide (that query as Halide cannot solve for the tile: see algorithm_reading). Only for kernels
// whose sources hide nothing else.
Expr block_cut_by_structure(const attention_algorithm& a) {
  const Expr last_key = a.kb * a.tiles.key_block + (a.tiles.key_block - 1);
  const Expr first_query = a.it * a.tile_queries_unproven;
  const Expr first_head = a.g * a.desc.group_size();
  return structurally_masked(a, last_key, first_query, clamp(last_key, 0, a.sources.key_length - 1),
                             clamp(first_query, 0, a.sources.query_length - 1), first_head, a.b);
}

// The scaled score after the description's score modifier; reads at the key alone from `key_read`
// where given.
Expr modified_score(const attention_algorithm& a, Expr scaled_dot, Expr key_clamped, Expr query_clamped, Expr head,
                    Expr batch, std::function<Expr(int)> key_read = {}) {
  if (!a.desc.has_score_mod()) return scaled_dot;
  const modifier_leaves at =
      a.sources.leaves_at(scaled_dot, batch, head, query_clamped, key_clamped, std::move(key_read));
  return lower_modifier(a.desc.score_modifier, a.desc.captures, a.captures, at);
}

// Where a score is evaluated: the key and query as computed and clamped into range, the head and
// batch, and the key and query the modifiers read (clamped, or gathered: modifier_index).
struct score_point {
  Expr key, query, key_clamped, query_clamped, head, batch, modifier_key, modifier_query;
};

// The one masking rule, for the key blocks and for results computed outside them (the module's
// weights): `scaled_dot` after the score modifier plus the additive mask, or masked_score where the
// key is masked by position, causality, the sources' mask, a modified score or an additive value at
// or below mask_out_threshold or (with `with_mask_modifier`) the mask modifier. Reads at the key alone come
// from `score_key_read` and `mask_key_read` where given (modifier_leaves::key_read).
Expr masked_score_at(const attention_algorithm& a, Expr scaled_dot, const score_point& at, bool with_mask_modifier,
                     std::function<Expr(int)> score_key_read = {}, std::function<Expr(int)> mask_key_read = {}) {
  Expr score = modified_score(a, scaled_dot, at.modifier_key, at.modifier_query, at.head, at.batch,
                              std::move(score_key_read));
  Expr masked = structurally_masked(a, at.key, at.query, at.key_clamped, at.query_clamped, at.head, at.batch);
  // A score modifier's -infinity (or anything at or below the threshold) masks the key, as the additive mask's does.
  if (a.desc.has_score_mod()) masked = masked || score <= mask_out_threshold;
  if (with_mask_modifier && a.desc.has_mask_mod())
    masked = masked || modifier_hides(a, at.modifier_key, at.modifier_query, at.head, at.batch, std::move(mask_key_read));
  if (a.sources.additive.defined()) {
    const Expr bias = a.sources.additive(at.key_clamped, at.query_clamped, at.head, at.batch);
    score += bias;
    masked = masked || bias <= mask_out_threshold;
  }
  return select(masked, masked_score, score);
}

// A key or query index clamped into [0, length), as the modifiers see it: gathered with
// blocking::modifier_reads_gather (the copy costs a quarter more generation time for such a variant).
Expr modifier_index(const attention_algorithm& a, Expr index, Expr length) {
  if (!a.tiles.modifier_reads_gather) return clamp(index, 0, length - 1);
  return gathered_index(index, length, a.sources.unproven_zero);
}

// A block's staged reads at the key alone (blocking::stage_key_reads): each distinct read is a Func
// (j, kb, b) of the block's keys, read there at the key as gathered_index gives it (no copy of the
// staging loop for the last block either).
class key_read_staging {
 public:
  key_read_staging(const attention_algorithm& a, const std::string& prefix, std::vector<Func>& staged)
      : a_(a), prefix_(prefix), staged_(staged) {}

  // modifier_leaves::key_read for `graph` at the block's key `key_in_block`; none without staging.
  std::function<Expr(int)> reads_of(const modifier_graph& graph, Expr key_in_block) {
    if (!a_.tiles.stage_key_reads) return {};
    return [this, &graph, key_in_block](int node) { return staged(graph, node)(key_in_block, a_.kb, a_.b); };
  }

 private:
  Func staged(const modifier_graph& graph, int node) {
    const Var j = a_.j, kb = a_.kb, b = a_.b;
    const Expr key = gathered_index(kb * a_.tiles.key_block + j, a_.sources.key_length, a_.sources.unproven_zero);
    const modifier_leaves at = a_.sources.leaves_at(Expr(), b, Expr(), Expr(), key);
    const Expr value = lower_modifier_node(graph, a_.desc.captures, a_.captures, at, node);
    for (const Func& read : staged_)
      if (Internal::equal(read.value(), value)) return read;
    Func read(prefix_ + "key_read_" + std::to_string(staged_.size()));
    read(j, kb, b) = value;
    staged_.push_back(read);
    return read;
  }

  const attention_algorithm& a_;
  const std::string prefix_;
  std::vector<Func>& staged_;
};

// Index expressions of a tile's rows and a block's keys, shared by every block Func.
struct tile_indices {
  Expr query, head, query_clamped, key, key_clamped;
  Expr modifier_query, modifier_key;  ///< modifier_index of query and key
};

// One key block's Funcs, named with `prefix`. With `modifier_per_block`, the mask modifier is applied
// only to blocks that block_visibility says it partly hides.
block_funcs define_block_funcs(const attention_algorithm& a, const tile_indices& at, const std::string& prefix,
                               bool modifier_per_block) {
  const Var e = a.e, j = a.j, ii = a.ii, kb = a.kb, it = a.it, g = a.g, b = a.b, lane = a.lane;
  const int lanes = a.tiles.lanes;
  block_funcs f;
  key_read_staging staging(a, prefix, f.key_reads);
  f.dot = Func(prefix + "dot");
  f.dot(j, ii, kb, it, g, b) = 0.0f;
  const RVar d = a.qk_reduction.x;
  Expr scaled_dot = f.dot(j, ii, kb, it, g, b);
  if (a.tiles.bf16_dot_products) {
    f.dot(j, ii, kb, it, g, b) += cast<float>(a.query_tile(d, ii, it, g, b)) *
                                  cast<float>(a.key_pairs(d % 2, j, d / 2, kb, g, b));
    scaled_dot *= a.desc.effective_scale();
  } else {
    // The tile's first row prefetches; the others read the same elements. decode_paged f32 / bf16 / int8
    // on a 2-core Xeon: 37.1, 36.1 / 24.8, 24.6 / 19.4, 19.3 against 39.1, 38.1 / 25.8, 25.4 / 19.8, 19.3 ms.
    Expr key = a.key_block(j, d, kb, g, b);
    if (a.key_block_unprefetched.defined()) key = select(ii == 0, key, a.key_block_unprefetched(j, d, kb, g, b));
    f.dot(j, ii, kb, it, g, b) += a.query_tile(d, ii, it, g, b) * key;
  }

  const score_point point{at.key,     at.query, at.key_clamped,    at.query_clamped,
                          at.head,    b,        at.modifier_key,   at.modifier_query};
  // Only causality and the key length mask: the scores are q.k as they are, and an update masks the
  // blocks those cut (the causal diagonal's, the last), not every block, per key and row. Paired runs,
  // new / old time (2-core Xeon): prefill_chunk 0.955 (5 of 5 faster), long_causal 0.975,
  // prefill_mha_causal 0.974, mha_small 0.984. Not for key splits, whose blocks are few: decode_paged
  // bf16 1.022 (0 of 5).
  const bool structure_per_block = !a.tiles.split_per_block && !a.desc.has_score_mod() &&
                                   !a.sources.additive.defined() && !a.sources.hidden.defined() &&
                                   (!a.desc.has_mask_mod() || modifier_per_block);
  const Expr masked_or_score = structure_per_block
                                   ? scaled_dot
                                   : masked_score_at(a, scaled_dot, point, !modifier_per_block,
                                                     staging.reads_of(a.desc.score_modifier, j),
                                                     staging.reads_of(a.desc.mask_modifier, j));
  f.score = Func(prefix + "score");
  f.score(j, ii, kb, it, g, b) = masked_or_score;
  if (structure_per_block) {
    f.structurally_masked_keys = RDom(0, a.tiles.key_block, prefix + "rstructure");
    f.structurally_masked_keys.where(block_cut_by_structure(a));
    const RVar key_in_block = f.structurally_masked_keys.x;
    const Expr key = kb * a.tiles.key_block + key_in_block;
    const Expr key_clamped = clamp(key, 0, a.sources.key_length - 1);
    f.score(key_in_block, ii, kb, it, g, b) =
        select(structurally_masked(a, key, at.query, key_clamped, at.query_clamped, at.head, b), masked_score,
               f.score(key_in_block, ii, kb, it, g, b));
  }
  if (modifier_per_block) {
    f.modifier_masked_keys = RDom(0, a.tiles.key_block, prefix + "rmask");
    f.modifier_masked_keys.where((a.block_visibility(kb, it, g, b) & some_key_hidden) != 0);
    const RVar key_in_block = f.modifier_masked_keys.x;
    const Expr key_clamped = modifier_index(a, kb * a.tiles.key_block + key_in_block, a.sources.key_length);
    f.score(key_in_block, ii, kb, it, g, b) =
        select(modifier_hides(a, key_clamped, at.modifier_query, at.head, b,
                              staging.reads_of(a.desc.mask_modifier, key_in_block)),
               masked_score, f.score(key_in_block, ii, kb, it, g, b));
  }

  // Row maximum of a block: lane-parallel partial maxima, then across lanes.
  f.block_max_lanes = Func(prefix + "block_max_lanes");
  f.block_max_lanes(lane, ii, kb, it, g, b) = masked_score;
  f.block_max_lanes(lane, ii, kb, it, g, b) =
      max(f.block_max_lanes(lane, ii, kb, it, g, b), f.score(a.lane_reduction * lanes + lane, ii, kb, it, g, b));
  f.block_max = Func(prefix + "block_max");
  f.block_max(ii, kb, it, g, b) = score_floor;
  f.block_max(ii, kb, it, g, b) =
      max(f.block_max(ii, kb, it, g, b), f.block_max_lanes(a.lane_collapse, ii, kb, it, g, b));

  // Halide assumes no NaNs: its max() may drop a NaN score and its exp() may turn NaN into a finite
  // value. So a NaN score is carried into the weight explicitly, and from there through the row's
  // sum and accumulator (and nothing else). The subtraction is strict: under fast-math LLVM may
  // assume its result is not NaN and fold the test away.
  const Expr shifted = strict_float(f.score(j, ii, kb, it, g, b) - f.block_max(ii, kb, it, g, b));
  f.weight = Func(prefix + "weight");
  f.weight(j, ii, kb, it, g, b) = select(is_nan(shifted), shifted, exp(shifted));

  // Key `key` of the block's weight as it multiplies V.
  auto value_weight = [&](const Expr& key) {
    Expr weight = f.weight(key, ii, kb, it, g, b);
    if (a.sources.value_weight_factor.defined()) {
      const Expr pv_key = clamp(kb * a.tiles.key_block + key, 0, a.sources.key_length - 1);
      weight *= a.sources.value_weight_factor(pv_key, at.query_clamped, at.head, b);
    }
    return weight;
  };
  if (a.tiles.bf16_dot_products) {
    f.value_weights = Func(prefix + "value_weights");
    f.value_weights(j, ii, kb, it, g, b) = cast<bfloat16_t>(value_weight(j));
  }
  // Without dropout the sums may add the weights as they multiply V: with bf16 dot products the block
  // then makes its weights once, in bf16 (no float copy of the block; +3% on prefill_gqa_bf16). Not
  // with a log-sum-exp output, which must be the scores' own (rounded sums moved it by 8e-4 at Lk 1101).
  f.sums_rounded_weights =
      a.tiles.bf16_dot_products && !a.sources.value_weight_factor.defined() && !a.desc.lse_output;
  const Expr lane_key = a.lane_reduction * lanes + lane;
  f.block_sum_lanes = Func(prefix + "block_sum_lanes");
  f.block_sum_lanes(lane, ii, kb, it, g, b) = 0.0f;
  f.block_sum_lanes(lane, ii, kb, it, g, b) += f.sums_rounded_weights
                                                   ? cast<float>(f.value_weights(lane_key, ii, kb, it, g, b))
                                                   : f.weight(lane_key, ii, kb, it, g, b);
  f.block_sum = Func(prefix + "block_sum");
  f.block_sum(ii, kb, it, g, b) = 0.0f;
  f.block_sum(ii, kb, it, g, b) += f.block_sum_lanes(a.lane_collapse, ii, kb, it, g, b);

  const RVar key = a.pv_reduction.x;
  f.block_pv = Func(prefix + "block_pv");
  f.block_pv(e, ii, kb, it, g, b) = 0.0f;
  if (a.tiles.bf16_dot_products) {
    f.block_pv(e, ii, kb, it, g, b) += cast<float>(f.value_weights(key, ii, kb, it, g, b)) *
                                       cast<float>(a.value_pairs(key % 2, e, key / 2, kb, g, b));
  } else {
    f.block_pv(e, ii, kb, it, g, b) += value_weight(key) * a.value_block(key, e, kb, g, b);
  }
  return f;
}

// What the mask modifier shows of key block kb to the rows of query tile `it` (visibility_bits).
// Masks of positions alone are bounded at build time: Halide's interval analysis of the mask over the
// tile's queries, heads and the block's keys gives expressions of (kb, it, g) evaluated per block
// (a bound it cannot find counts as "maybe"). Masks that read captured tensors or scalars are
// evaluated at run time on every (row, key) of every block, once per call, into a table
// (visibility_table.hpp): the kernel's input, or computed here.
void define_block_visibility(attention_algorithm& a) {
  const attention_desc& desc = a.desc;
  const Var kb = a.kb, it = a.it, g = a.g, b = a.b;
  const int group = desc.group_size(), tile_queries = a.tiles.queries_per_tile, block_keys = a.tiles.key_block;
  const Expr query_length = a.sources.query_length, key_length = a.sources.key_length;
  a.block_visibility = Func("block_visibility");
  if (!needs_visibility_table(desc)) {
    const Expr visible_bit = cast<uint8_t>(some_key_visible), hidden_bit = cast<uint8_t>(some_key_hidden);
    const Expr no_bits = cast<uint8_t>(0);
    const Var query("mask_q"), key("mask_kv"), head("mask_h");
    const Expr visible =
        lower_modifier(desc.mask_modifier, desc.captures, a.captures, a.sources.leaves_at(Expr(), b, head, query, key));
    Internal::Scope<Internal::Interval> scope;
    scope.push(query.name(), Internal::Interval(it * tile_queries, min(it * tile_queries + tile_queries, query_length) - 1));
    scope.push(key.name(), Internal::Interval(kb * block_keys, min(kb * block_keys + block_keys, key_length) - 1));
    scope.push(head.name(), Internal::Interval(g * group, g * group + group - 1));
    const Internal::Interval bounds = Internal::bounds_of_expr_in_scope(visible, scope);
    const Expr some_visible = bounds.has_upper_bound() ? bounds.max : Internal::const_true();
    const Expr all_visible = bounds.has_lower_bound() ? bounds.min : Internal::const_false();
    a.block_visibility(kb, it, g, b) = select(some_visible, visible_bit, no_bits) | select(all_visible, no_bits, hidden_bit);
    return;
  }
  const Expr table_head = visibility_table_heads(desc) == 1 ? Expr(0) : Expr(g);
  if (a.tiles.visibility_slice < 0) {
    visibility_inputs inputs{tile_queries, block_keys, query_length, key_length, a.sources.unproven_zero, a.tiles.lanes};
    if (desc.global_positions) inputs.origin = a.sources.leaves_at(Expr(), Expr(), Expr(), 0, 0);
    a.visibility_in_pipeline = define_visibility_stages(desc, a.captures, inputs);
    a.block_visibility(kb, it, g, b) = a.visibility_in_pipeline.table(kb, it, table_head, b);
    return;
  }
  a.visibility_table = ImageParam(UInt(8), 4, "visibility_table");
  for (int dim = 0; dim < 4; ++dim) a.visibility_table.dim(dim).set_min(0);
  const int slice_first_head = a.tiles.visibility_slice * visibility_table_heads(desc);
  a.block_visibility(kb, it, g, b) = a.visibility_table(kb, it, slice_first_head + table_head, b);
}

// A size in a form Halide cannot prove constant, though provably no larger than `size`.
Expr unproven(const attention_algorithm& a, int size) { return size + a.sources.unproven_zero; }

// The algorithm's description, blocking, sources and captured parameters, before any stage.
attention_algorithm algorithm_reading(const attention_desc& desc, const blocking& tiles, attention_sources sources) {
  attention_algorithm a;
  a.desc = desc;
  a.tiles = tiles;
  a.sources = std::move(sources);
  a.captures = capture_params::declare(desc.captures);
  // Tests that depend on the tile (causality, the output's last tile) multiply `it` by this, equal to
  // tile_queries: Halide then cannot solve them for `it`. Solvable, each makes Halide trim loops with
  // a bound marked `likely`, and loop partitioning copy the whole tile body for the tiles the bound
  // trims and those it does not (measured: 2.5x the code generation time, twice the object code).
  a.tile_queries_unproven = unproven(a, tiles.queries_per_tile);
  return a;
}

// Row ii of tile it is query `query` of head `head` (a head of kv group g); key j of block kb is key
// `key`. Queries past the end of the last tile and keys past the end of the last block are computed
// on clamped indices (never out of bounds) and masked or discarded. With rows in lanes, the masks'
// reads at the tile's queries are gathered (gathered_index): clamped, loop partitioning split the
// score's row loop in three copies.
tile_indices indices_of(attention_algorithm& a) {
  const int group = a.desc.group_size();
  const Expr query_length = a.sources.query_length, key_length = a.sources.key_length;
  const Expr query = a.it * a.tiles.queries_per_tile + a.ii / group;
  const Expr head = a.g * group + a.ii % group;
  const Expr key = a.kb * a.tiles.key_block + a.j;
  const Expr query_clamped = a.tiles.qk == qk_layout::rows_in_lanes
                                 ? gathered_index(query, query_length, a.sources.unproven_zero)
                                 : clamp(query, 0, query_length - 1);
  // A length read from a buffer is a load the clamp repeats in every inner loop that reads K or V:
  // the clamped keys are a Func a schedule can compute once per block.
  Expr key_clamped = clamp(key, 0, key_length - 1);
  if (a.sources.key_extent.defined()) {
    a.clamped_keys = Func("clamped_keys");
    a.clamped_keys(a.j, a.kb, a.b) = key_clamped;
    key_clamped = a.clamped_keys(a.j, a.kb, a.b);
  }
  return {query,
          head,
          query_clamped,
          key,
          key_clamped,
          modifier_index(a, query, query_length),
          modifier_index(a, key, key_length)};
}

// The tile's queries and the blocks' keys and values as float, the queries pre-multiplied by the scale;
// with bf16 dot products, the tile's queries and pairs of K and V as bf16.
void define_inputs(attention_algorithm& a, const tile_indices& at) {
  const Var e = a.e, d = a.d, j = a.j, ii = a.ii, kb = a.kb, it = a.it, g = a.g, b = a.b;
  const attention_desc& desc = a.desc;
  const float scale = desc.effective_scale();
  const Expr query_clamped = clamp(at.query, 0, a.sources.query_length - 1);
  a.query_tile = Func("query_tile");
  const Expr query = a.sources.q(d, at.head, query_clamped, b);
  if (a.tiles.bf16_dot_products)
    a.query_tile(d, ii, it, g, b) = cast<bfloat16_t>(query);
  else
    a.query_tile(d, ii, it, g, b) = cast<float>(query) * scale;
  const bool stages_elements = a.tiles.stage_value_elements && a.sources.v_stored.defined();
  const Expr key_read = cast<float>(a.sources.k(d, g, at.key_clamped, b));
  Expr key = key_read;
  Expr value = stages_elements ? a.sources.v_stored(e, g, at.key_clamped, b)
                                : cast<float>(a.sources.v(e, g, at.key_clamped, b));
  if (a.tiles.prefetch_keys_ahead > 0 && a.sources.k_prefetch.defined()) {
    const Expr key_ahead = clamp(at.key + a.tiles.prefetch_keys_ahead, 0, a.sources.key_length - 1);
    auto after_prefetch = [](const Expr& prefetch, const Expr& read) {
      return Internal::Call::make(read.type(), Internal::Call::return_second, {prefetch, read},
                                  Internal::Call::PureIntrinsic);
    };
    key = after_prefetch(a.sources.k_prefetch(d, g, key_ahead, b), key);
    value = after_prefetch(a.sources.v_prefetch(e, g, key_ahead, b), value);
    a.key_block_unprefetched = Func("key_block_unprefetched");
    a.key_block_unprefetched(j, d, kb, g, b) = key_read;
  }
  if (stages_elements) {
    // The keys before Lk alone, not the whole split: decode_paged's shape at B16 Lk 64, f32 0.67 against
    // 1.77 ms, int8 0.51 against 0.71 (2-core Intel Xeon).
    a.staged_values = RDom(0, a.tiles.key_block, "staged_key");
    a.staged_values.where(kb * a.tiles.key_block + a.staged_values < a.sources.key_length);
    a.value_elements = Func("value_elements");
    a.value_elements(j, e, kb, g, b) = undef(value.type());
    a.value_elements(a.staged_values, e, kb, g, b) = substitute(j.name(), a.staged_values, value);
    value = a.sources.v_of_stored(a.value_elements(j, e, kb, g, b), g, at.key_clamped, b);
  }
  a.key_block = Func("key_block");
  a.key_block(j, d, kb, g, b) = key;
  a.value_block = Func("value_block");
  a.value_block(j, e, kb, g, b) = value;
  if (a.tiles.bf16_dot_products) {
    const Var p = a.p, pair = a.pair;
    a.key_pairs = Func("key_pairs");
    a.key_pairs(p, j, pair, kb, g, b) = cast<bfloat16_t>(a.sources.k(2 * pair + p, g, at.key_clamped, b));
    a.value_pairs = Func("value_pairs");
    const Expr pair_key_clamped = substitute(j.name(), 2 * pair + p, at.key_clamped);
    a.value_pairs(p, e, pair, kb, g, b) = cast<bfloat16_t>(a.sources.v(e, g, pair_key_clamped, b));
  }
}

// The first key of block `block`. Tests of keys (past Lk, causal, skipped blocks) multiply it by an
// unproven block size, for the same reason as tile_queries_unproven: Halide would otherwise copy the
// whole block body for the last block, or for the blocks below the causal diagonal (the copy
// measured no faster: B1 H32 KVH8 D128 causal L1024, 51-53 ms without it, 54-56 ms with it).
Expr block_start(const attention_algorithm& a, Expr block) { return block * unproven(a, a.tiles.key_block); }

// Under causality, the last key any row of tile `it` can see: the products skip the key groups past
// it, the state the blocks past it. Undefined without causality.
Expr last_visible_key_of(const attention_algorithm& a) {
  if (!a.desc.is_causal()) return Expr();
  Expr last = a.it * a.tile_queries_unproven + (a.tiles.queries_per_tile - 1) + a.sources.causal_offset;
  if (!Internal::is_const_zero(a.sources.causally_free_keys)) last = max(last, a.sources.causally_free_keys - 1);
  return last;
}

// The block stages' reductions, the products trimmed to the keys a row can use.
void define_reductions(attention_algorithm& a, const Expr& last_visible_key) {
  const int block_keys = a.tiles.key_block;
  const Expr key_length = a.sources.key_length;
  a.qk_reduction = RDom(0, a.desc.qk_head_dim, "rd");
  a.lane_reduction = RDom(0, block_keys / a.tiles.lanes, "rg");
  a.lane_collapse = RDom(0, a.tiles.lanes, "rl");
  a.pv_reduction = RDom(0, block_keys, "rj");
  const Expr first_key = block_start(a, a.kb);
  // Keys past Lk (padding of the last block) are masked, so their products are skipped where no
  // vector lane spans keys: along head_dim. (Elsewhere the test would split vectors; measured 2x
  // slower with keys in lanes.) Rows past Lq are computed on clamped queries and discarded: a test of
  // rows saved their products only in the last tile, and cost more in every other (B16 H8 D64, one
  // thread: L16 0.19 ms without it, 0.22 ms with it; L10 0.134 against 0.127 ms).
  if (a.tiles.qk == qk_layout::along_head_dim) {
    a.qk_reduction.where(first_key + a.j < key_length);
    a.pv_reduction.where(first_key + a.pv_reduction < key_length);
  } else if (a.tiles.qk == qk_layout::rows_in_lanes && !a.sources.key_extent.defined()) {
    // Rows in lanes: a key is a broadcast operand, so the register tile's key groups past Lk are
    // skipped whole, and weight x V's keys one by one. Lk 128 in 256-key blocks, 3 interleaved runs:
    // module_self 3.82-3.84 -> 3.52-3.68 ms, module_self_weights 4.46-4.85 -> 4.09-4.27 ms. Not where
    // the key length is read from a buffer (a paged cache): prefill_chunk took 140-148 ms against 80-82.
    const int group_keys = a.tiles.qk_key_group;
    a.qk_reduction.where(first_key + (a.j / group_keys) * group_keys < key_length);
    a.pv_reduction.where(first_key + a.pv_reduction < key_length);
  }
  // Key groups past the last visible key are skipped in both products (their weights are 0), whole
  // groups of the schedule's q.k register tile since a finer test would split its vectors.
  if (last_visible_key.defined()) {
    const int group_keys = a.tiles.qk_key_group;
    a.qk_reduction.where(first_key + (a.j / group_keys) * group_keys <= last_visible_key);
    // bf16 dot products sum keys in pairs: a pair is skipped whole (a test per key would split the
    // vector reduction lane by lane).
    const Expr pv_key = a.tiles.bf16_dot_products ? (a.pv_reduction / 2) * 2 : Expr(a.pv_reduction);
    a.pv_reduction.where(first_key + pv_key <= last_visible_key);
  }
}

// Blocks the mask modifier hides from every row of a tile are skipped; blocks it shows whole to
// every row skip its per-key evaluation.
bool skips_hidden_blocks(const attention_algorithm& a) { return a.desc.has_mask_mod(); }

// Whether the state starts as the first key block's (blocking::first_block_starts_state).
bool starts_from_first_block(const attention_algorithm& a) {
  return a.tiles.first_block_starts_state && !skips_hidden_blocks(a) && !a.tiles.split_per_block;
}

// The key blocks' stages, and the first block's where the state starts from it.
void define_blocks(attention_algorithm& a, const tile_indices& at) {
  if (skips_hidden_blocks(a)) define_block_visibility(a);
  a.blocks = define_block_funcs(a, at, "", skips_hidden_blocks(a));
  if (starts_from_first_block(a)) a.first_block = define_block_funcs(a, at, "first_", false);
}

// Key blocks, the last one partly past Lk.
Expr block_count(const attention_algorithm& a) {
  return (a.sources.key_bound() + a.tiles.key_block - 1) / a.tiles.key_block;
}

// Whether some row of tile `it` can see a key of block `block` (block < block_count: both RDoms stop
// there): it starts before the causal diagonal and the mask modifier shows it. Undefined where every
// block is seen.
Expr block_is_seen(const attention_algorithm& a, Expr block, const Expr& last_visible_key) {
  Expr seen;
  if (last_visible_key.defined()) seen = block_start(a, block) <= last_visible_key;
  if (skips_hidden_blocks(a)) {
    const Expr some_visible = (a.block_visibility(block, a.it, a.g, a.b) & some_key_visible) != 0;
    seen = seen.defined() ? seen && some_visible : some_visible;
  }
  return seen;
}

// Flash-decoding: split s is key block s, its state the block's own. A block no row sees gives the
// empty state: selected, so that Halide skips computing the block's stages there. The test is read
// from a table: Halide would narrow the block range by a test it can solve, to one it cannot prove
// is one block, and size the stages' scratch at run time (so would a one-block recurrence: measured
// 40% slower decoding).
void define_split_states(attention_algorithm& a, const Expr& last_visible_key) {
  const Var e = a.e, ii = a.ii, kb = a.kb, it = a.it, s = a.s, g = a.g, b = a.b;
  const block_funcs& block = a.blocks;
  const Tuple block_state(block.block_max(ii, s, it, g, b), block.block_sum(ii, s, it, g, b),
                          block.block_pv(e, ii, s, it, g, b));
  a.state = Func("state");
  Expr seen_test = block_is_seen(a, kb, last_visible_key);
  if (a.sources.key_extent.defined()) {
    const Expr exists = block_start(a, kb) < a.sources.key_length;
    seen_test = seen_test.defined() ? exists && seen_test : exists;
  }
  if (!seen_test.defined()) {
    a.state(e, ii, it, s, g, b) = block_state;
    return;
  }
  a.split_is_seen = Func("split_is_seen");
  a.split_is_seen(kb, it, g, b) = seen_test;
  const Expr seen = a.split_is_seen(s, it, g, b);
  a.state(e, ii, it, s, g, b) = Tuple(select(seen, block_state[0], score_floor), select(seen, block_state[1], 0.0f),
                                      select(seen, block_state[2], 0.0f));
}

// The state merged with key block `block`, both rescaled to the larger maximum. One of the two
// rescale factors is 1 (the larger maximum rescales by exp(0)): one exp, not two, per row and
// feature vector of every block.
Tuple state_with_block(const attention_algorithm& a, const Expr& block) {
  const Var e = a.e, ii = a.ii, it = a.it, s = a.s, g = a.g, b = a.b;
  const Expr running_max = a.state(e, ii, it, s, g, b)[0];
  const Expr running_sum = a.state(e, ii, it, s, g, b)[1];
  const Expr running_acc = a.state(e, ii, it, s, g, b)[2];
  const Expr block_max = a.blocks.block_max(ii, block, it, g, b);
  const Expr new_max = max(running_max, block_max);
  const Expr running_is_larger = running_max >= block_max;
  const Expr smaller_factor = exp(-abs(running_max - block_max));
  const Expr keep = select(running_is_larger, 1.0f, smaller_factor);
  const Expr add = select(running_is_larger, smaller_factor, 1.0f);
  return Tuple(new_max, running_sum * keep + a.blocks.block_sum(ii, block, it, g, b) * add,
               running_acc * keep + a.blocks.block_pv(e, ii, block, it, g, b) * add);
}

// The online softmax: the state (max, sum, accumulator) starts empty, (floor, 0, 0), or as the first
// block's, and merges the blocks the tile sees in order. (A first block the tile cannot see gives
// the empty state: its keys are all masked.)
void define_block_recurrence(attention_algorithm& a, const Expr& last_visible_key) {
  const Var e = a.e, ii = a.ii, it = a.it, s = a.s, g = a.g, b = a.b;
  a.state = Func("state");
  const int first_merged = starts_from_first_block(a) ? 1 : 0;
  a.key_blocks = RDom(first_merged, block_count(a) - first_merged, "rk");
  const Expr block = a.key_blocks;
  if (a.sources.key_extent.defined()) a.key_blocks.where(block_start(a, block) < a.sources.key_length);
  if (const Expr seen_test = block_is_seen(a, block, last_visible_key); seen_test.defined())
    a.key_blocks.where(seen_test);
  if (starts_from_first_block(a)) {
    const block_funcs& first = a.first_block;
    a.state(e, ii, it, s, g, b) = Tuple(first.block_max(ii, 0, it, g, b), first.block_sum(ii, 0, it, g, b),
                                        first.block_pv(e, ii, 0, it, g, b));
  } else {
    a.state(e, ii, it, s, g, b) = Tuple(score_floor, 0.0f, 0.0f);
  }
  a.state(e, ii, it, s, g, b) = state_with_block(a, block);
}

// The splits' states rescaled to the largest maximum and added: the same sums one recurrence over
// every block would give. Without splits, the one state.
void define_merge(attention_algorithm& a) {
  const Var e = a.e, ii = a.ii, it = a.it, g = a.g, b = a.b;
  a.merged_max = Func("merged_max");
  a.merged = Func("merged");
  if (!a.tiles.split_per_block) {
    a.merged_max(ii, it, g, b) = a.state(0, ii, it, 0, g, b)[0];
    a.merged(e, ii, it, g, b) = Tuple(a.state(e, ii, it, 0, g, b)[1], a.state(e, ii, it, 0, g, b)[2]);
    return;
  }
  a.splits = RDom(0, block_count(a), "rs");
  a.merged_max(ii, it, g, b) = score_floor;
  a.merged_max(ii, it, g, b) = max(a.merged_max(ii, it, g, b), a.state(0, ii, it, a.splits, g, b)[0]);
  // A split's maximum is one per row: read at feature 0, so its rescale is one exp per row.
  const Expr rescale = exp(a.state(0, ii, it, a.splits, g, b)[0] - a.merged_max(ii, it, g, b));
  a.merged(e, ii, it, g, b) = Tuple(0.0f, 0.0f);
  a.merged(e, ii, it, g, b) = Tuple(a.merged(e, ii, it, g, b)[0] + a.state(e, ii, it, a.splits, g, b)[1] * rescale,
                                    a.merged(e, ii, it, g, b)[1] + a.state(e, ii, it, a.splits, g, b)[2] * rescale);
}

// The accumulator over the sum, 0 for a fully masked row: its sum is exactly 0, since every visible
// key contributes at least exp(0) at its block.
// A row's softmax totals: its maximum, and its sum and accumulator at that maximum; with a sink, the
// sink's logit joins the maximum and its exp the sum (so a row no key is visible to sums to 1).
struct row_totals {
  Expr max, sum, accumulator;
};

row_totals totals_of(const attention_algorithm& a, Expr e, Expr row, Expr tile, Expr kv_head, Expr batch) {
  const Expr max = a.merged_max(row, tile, kv_head, batch);
  const Expr sum = a.merged(e, row, tile, kv_head, batch)[0], accumulator = a.merged(e, row, tile, kv_head, batch)[1];
  if (!a.sources.sink.defined()) return {max, sum, accumulator};
  const int group = a.desc.group_size();
  const Expr sink = a.sources.sink(kv_head * group + row % group);
  const Expr with_sink = Halide::max(max, sink);
  const Expr rescale = exp(max - with_sink);
  return {with_sink, sum * rescale + exp(sink - with_sink), accumulator * rescale};
}

void define_normalized(attention_algorithm& a) {
  const Var e = a.e, ii = a.ii, it = a.it, g = a.g, b = a.b;
  const row_totals row = totals_of(a, e, ii, it, g, b);
  a.normalized = Func("normalized");
  a.normalized(e, ii, it, g, b) = select(row.sum == 0.0f, 0.0f, row.accumulator / row.sum);
}

// Where query i of head h is in the tiles: row (i % tile_queries) * group + h % group of tile
// i / tile_queries, kv head h / group.
struct tile_row {
  Expr row, tile, kv_head;
};

tile_row tile_row_of(const attention_algorithm& a) {
  const int group = a.desc.group_size(), tile_queries = a.tiles.queries_per_tile;
  return {(a.i % tile_queries) * group + a.h % group, a.i / tile_queries, a.h / group};
}

// Row (i, h, b)'s log-sum-exp: -inf for a fully masked row, NaN for a NaN sum.
Expr log_sum_exp(const attention_algorithm& a, const tile_row& at) {
  const row_totals row = totals_of(a, 0, at.row, at.tile, at.kv_head, a.b);
  return select(row.sum == 0.0f, negative_infinity(), is_nan(row.sum), row.sum, row.max + log(row.sum));
}

// The output (e, h, i, b), the normalized rows in the element type, and the log-sum-exp where asked:
// the output's second value or a Func of its own (blocking::lse_in_output).
void define_outputs(attention_algorithm& a) {
  const Var e = a.e, i = a.i, h = a.h, b = a.b;
  const tile_row at = tile_row_of(a);
  const Expr normalized = a.normalized(e, at.row, at.tile, at.kv_head, b);
  const Expr value = a.sources.bfloat16_as_bits ? bfloat16_bits_of(normalized)
                                                : cast(halide_type_of(a.desc.element_type), normalized);
  a.output = Func("output");
  if (!a.desc.lse_output) {
    a.output(e, h, i, b) = value;
  } else if (a.tiles.lse_in_output) {
    a.output(e, h, i, b) = Tuple(value, log_sum_exp(a, at));
  } else {
    a.output(e, h, i, b) = value;
    a.lse = Func("lse");
    a.lse(i, h, b) = log_sum_exp(a, at);
  }
}
}  // namespace

// bf16 is the upper half of a float32: widening shifts its bits up; narrowing rounds to nearest even
// (a NaN keeps a quiet NaN's bits, which rounding could carry into infinity).
Expr float_of_bfloat16_bits(Expr bits) { return reinterpret(Float(32), cast<uint32_t>(bits) << 16); }

Expr bfloat16_bits_of(Expr value) {
  const Expr bits = reinterpret(UInt(32), value);
  const Expr rounded = (bits + (0x7fff + ((bits >> 16) & 1))) >> 16;
  const Expr is_nan_bits = (bits & 0x7fffffff) > 0x7f800000;
  return cast<uint16_t>(select(is_nan_bits, (bits >> 16) | 0x40, rounded));
}

Expr score_at(const attention_algorithm& a, Expr scaled_dot, Expr key, Expr query, Expr head, Expr batch) {
  const Expr key_clamped = clamp(key, 0, a.sources.key_length - 1);
  const Expr query_clamped = clamp(query, 0, a.sources.query_length - 1);
  return masked_score_at(a, scaled_dot, {key, query, key_clamped, query_clamped, head, batch, key_clamped, query_clamped},
                         true);
}

Type halide_type_of(dtype t) {
  switch (t) {
    case dtype::f32: return Float(32);
    case dtype::f16: return Float(16);
    case dtype::bf16: return BFloat(16);
    case dtype::u8: return UInt(8);
    case dtype::i32: return Int(32);
    case dtype::i8: return Int(8);
  }
  return Type();
}

Argument attention_algorithm::parameter(const kernel_argument& argument) const {
  switch (argument.slot) {
    case argument_slot::q: return q;
    case argument_slot::q_offsets: return q_offsets;
    case argument_slot::k: return k;
    case argument_slot::v: return v;
    case argument_slot::k_scale: return k_scale;
    case argument_slot::v_scale: return v_scale;
    case argument_slot::page_table: return page_table;
    case argument_slot::kv_lengths: return kv_lengths;
    case argument_slot::positions: return positions;
    case argument_slot::sinks: return sinks;
    case argument_slot::mask: return mask;
    case argument_slot::key_padding: return key_padding;
    case argument_slot::capture: return captures.tensors.at(argument.index);
    case argument_slot::scalars: return captures.scalars;
    case argument_slot::output: case argument_slot::lse: break;
  }
  throw std::logic_error("attngen: " + std::string(argument.name) + " is an output, not a pipeline parameter");
}

std::vector<Argument> attention_algorithm::arguments() const {
  std::vector<Argument> args;
  for (const kernel_argument& argument : kernel_arguments(desc))
    if (!argument.is_output()) args.push_back(parameter(argument));
  if (visibility_table.defined()) args.push_back(visibility_table);
  return args;
}

std::vector<Func> attention_algorithm::outputs() const {
  std::vector<Func> funcs = {output};
  if (lse.defined()) funcs.push_back(lse);
  return funcs;
}

namespace {

// The key and value tensors as the algorithm reads them, (d, g, j, b) float: dense, or a paged pool
// read through the page table; int8 elements times their row's scale. Sets the key length (and the
// bound loops use, where the length is read from a buffer).
struct cache_reads {
  ImageParam k, v, k_scale, v_scale, page_table, kv_lengths;
};

// Evaluating it prefetches the cache line that holds `tensor`'s element at `coordinates` (Halide's
// prefetch intrinsic, whose offset counts units of its type: 4 bytes). An int of no meaning.
Expr prefetch_line(const ImageParam& tensor, const std::vector<Expr>& coordinates) {
  Expr offset = cast<int64_t>(0);
  for (int i = 0; i < tensor.dimensions(); ++i)
    offset += cast<int64_t>(coordinates[std::size_t(i)] - tensor.dim(i).min()) * tensor.dim(i).stride();
  const Expr units = offset * tensor.type().bytes() / 4;
  const Expr base = Internal::Variable::make(Handle(), tensor.name(), tensor.parameter());
  return Internal::Call::make(Int(32), Internal::Call::prefetch, {base, units, 1, 1}, Internal::Call::Intrinsic);
}

cache_reads define_cache_sources(const attention_desc& desc, bool as_bits, const ImageParam& q, attention_sources& src) {
  const dtype element = desc.effective_kv_element();
  const bool bits = as_bits && element == dtype::bf16;
  const Type type = bits ? UInt(16) : halide_type_of(element);
  cache_reads c;
  c.k = ImageParam(type, 4, "k");
  c.v = ImageParam(type, 4, "v");
  if (desc.has_kv_scales()) {
    c.k_scale = ImageParam(Float(32), 3, "k_scale");
    c.v_scale = ImageParam(Float(32), 3, "v_scale");
  }
  if (desc.has_kv_lengths()) c.kv_lengths = ImageParam(Int(32), 1, "kv_lengths");
  auto widened = [=](Expr stored) { return bits ? float_of_bfloat16_bits(stored) : cast<float>(stored); };
  Var d("d"), g("g"), j("j"), b("b");
  // A token's place: (j, b) dense (the runtime cuts k and v to the sequence's keys), (row, page) paged.
  Expr token_inner = j, token_outer = b;
  if (desc.is_paged()) {
    c.page_table = ImageParam(Int(32), 2, "page_table");
    const int page_size = desc.kv_page_size;
    // The sequence is the one of the call's q (batch extent 1); its length is read, so loops run to
    // the table's capacity and are cut at the length by predicates.
    src.key_length = c.kv_lengths(q.dim(3).min());
    src.key_extent = c.page_table.dim(0).extent() * page_size;
    const Expr column = clamp(j / page_size, 0, c.page_table.dim(0).extent() - 1);
    token_inner = j % page_size;
    token_outer = clamp(c.page_table(column, b), 0, c.k.dim(3).extent() - 1);
  } else {
    src.key_length = c.k.dim(2).extent();
  }
  Expr key = widened(c.k(d, g, token_inner, token_outer));
  if (desc.has_kv_scales()) key *= c.k_scale(g, token_inner, token_outer);
  src.k(d, g, j, b) = key;
  src.v_stored(d, g, j, b) = c.v(d, g, token_inner, token_outer);
  src.v_of_stored = [=](Expr stored, Expr kv_head, Expr key_index, Expr batch) {
    Expr value = widened(std::move(stored));
    if (!desc.has_kv_scales()) return value;
    const std::map<std::string, Expr> at = {{j.name(), key_index}, {b.name(), batch}};
    return value * c.v_scale(kv_head, substitute(at, token_inner), substitute(at, token_outer));
  };
  src.v(d, g, j, b) = src.v_of_stored(src.v_stored(d, g, j, b), g, j, b);
  src.k_prefetch(d, g, j, b) = prefetch_line(c.k, {d, g, token_inner, token_outer});
  src.v_prefetch(d, g, j, b) = prefetch_line(c.v, {d, g, token_inner, token_outer});
  return c;
}

}  // namespace

attention_algorithm define_attention(const attention_desc& desc, const blocking& tiles, bool bfloat16_as_bits) {
  const bool as_bits = bfloat16_as_bits && desc.element_type == dtype::bf16;
  const Type element = as_bits ? UInt(16) : halide_type_of(desc.element_type);
  const ImageParam q(element, 4, "q");
  ImageParam mask, key_padding, q_offsets, sinks;
  Var d("d"), j("j"), i("i"), h("h"), b("b");
  attention_sources src;
  src.bfloat16_as_bits = as_bits;
  src.q(d, h, i, b) = as_bits ? float_of_bfloat16_bits(q(d, h, i, b)) : q(d, h, i, b);
  const cache_reads cache = define_cache_sources(desc, bfloat16_as_bits, q, src);
  src.query_length = q.dim(2).extent();
  // A zero Halide cannot prove. Dense: q and k hold the same batch (checked by the runtime); a zero
  // made from one extent alone, such as min(Lq, 0), Halide proves from its own check that extents
  // are not negative. Per sequence: q holds the one sequence of the call.
  src.unproven_zero = desc.has_sequence_lengths() ? min(q.dim(3).extent() - 1, 0)
                                                  : min(q.dim(3).extent() - cache.k.dim(3).extent(), 0);
  ImageParam positions;
  if (desc.global_positions) {
    positions = declare_positions();
    const modifier_leaves origin = positions_origin(positions);
    src.query_start = origin.query;
    src.key_start = origin.key;
    src.query_total = origin.query_length;
    src.key_total = origin.key_length;
  }
  // Query i sees key j where key_start + j <= query_start + i (+ key_total - query_total bottom-right).
  const bool bottom_right = desc.causal_mode == causal_alignment::bottom_right;
  if (desc.global_positions)
    src.causal_offset = src.query_start - src.key_start + (bottom_right ? src.key_total - src.query_total : Expr(0));
  else
    src.causal_offset = bottom_right ? src.key_length - src.query_length : Expr(0);
  if (desc.is_ragged()) q_offsets = ImageParam(Int(32), 1, "q_offsets");
  if (desc.has_sinks) {
    sinks = ImageParam(Float(32), 1, "sinks");
    src.sink(h) = sinks(h);
  }
  if (desc.has_additive_mask()) {
    mask = ImageParam(element, mask_rank(desc.additive_mask_shape), "mask");
    const Expr value = additive_mask_at(mask, desc.additive_mask_shape, j, i, h, b);
    src.additive(j, i, h, b) = as_bits ? float_of_bfloat16_bits(value) : cast<float>(value);
  }
  if (desc.has_key_padding_mask()) {
    key_padding = ImageParam(UInt(8), 2, "key_padding");
    const Expr flag = key_padding(j, b) != 0;
    src.hidden(j, i, h, b) = desc.key_padding == padding_polarity::true_means_ignore ? flag : !flag;
  }
  attention_algorithm a = define_attention(desc, tiles, src);
  // Extents the runtime checks, stated. The description fixes the heads and head dims: every loop
  // over them has a constant extent, without tail code for a partial vector or the guards that
  // compute_with puts around the log-sum-exp's kv-head loop (GQA 32/8 D128 causal, AVX2, 4 variants:
  // 2.4 s instead of 2.6 s of generation; with the log-sum-exp 3.9 s instead of 5.2 s).
  const int heads = desc.num_heads, kv_heads = desc.effective_kv_heads();
  const int qk_dim = desc.qk_head_dim, v_dim = desc.effective_v_head_dim();
  q.dim(0).set_bounds(0, qk_dim).dim(1).set_bounds(0, heads);
  cache.k.dim(0).set_bounds(0, qk_dim).dim(1).set_bounds(0, kv_heads);
  cache.v.dim(0).set_bounds(0, v_dim).dim(1).set_bounds(0, kv_heads);
  if (desc.is_paged())
    for (const ImageParam& pool : {cache.k, cache.v}) pool.dim(2).set_bounds(0, desc.kv_page_size);
  if (desc.has_kv_scales()) {
    cache.k_scale.dim(0).set_bounds(0, kv_heads);
    cache.v_scale.dim(0).set_bounds(0, kv_heads);
  }
  if (desc.has_sinks) sinks.dim(0).set_bounds(0, heads);
  const OutputImageParam output = a.output.output_buffers()[0];
  output.dim(0).set_bounds(0, v_dim).dim(1).set_bounds(0, heads);
  // A log-sum-exp in the output has the output's extents (Halide ties a Tuple's buffers) and a
  // feature dimension that steps nowhere. One of its own is given the output's (B, H, Lq), so that
  // their bounds are one expression.
  if (desc.lse_output && !a.lse.defined()) a.output.output_buffers()[1].dim(0).set_stride(0);
  if (a.lse.defined()) {
    const OutputImageParam lse = a.lse.output_buffer();
    lse.dim(0).set_bounds(output.dim(2).min(), output.dim(2).extent());
    lse.dim(1).set_bounds(0, heads);
    lse.dim(2).set_bounds(output.dim(3).min(), output.dim(3).extent());
  }
  a.q = q;
  a.k = cache.k;
  a.v = cache.v;
  a.q_offsets = q_offsets;
  a.k_scale = cache.k_scale;
  a.v_scale = cache.v_scale;
  a.page_table = cache.page_table;
  a.kv_lengths = cache.kv_lengths;
  a.positions = positions;
  a.sinks = sinks;
  a.mask = mask;
  a.key_padding = key_padding;
  return a;
}

attention_algorithm define_attention(const attention_desc& desc, const blocking& tiles, attention_sources sources) {
  attention_algorithm a = algorithm_reading(desc, tiles, std::move(sources));
  const tile_indices at = indices_of(a);
  define_inputs(a, at);
  const Expr last_visible_key = last_visible_key_of(a);
  define_reductions(a, last_visible_key);
  define_blocks(a, at);
  if (tiles.split_per_block)
    define_split_states(a, last_visible_key);
  else
    define_block_recurrence(a, last_visible_key);
  define_merge(a);
  define_normalized(a);
  define_outputs(a);
  return a;
}

}  // namespace attngen::codegen
