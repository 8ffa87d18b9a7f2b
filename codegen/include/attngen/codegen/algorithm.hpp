#pragma once
/// The attention algorithm as Halide Funcs: what is computed, with no scheduling.
///
/// Flash-style decomposition. A tile holds `queries_per_tile` queries for every head of one GQA group
/// (row ii is query ii / G of the tile, head ii % G of the group); keys come in blocks of `key_block`.
/// For each (tile, block) the block's scores, its row maxima, its softmax numerators, their row sums
/// and their product with V are pure Funcs of the block index; a running (max, sum, accumulator)
/// state starts empty and a recurrence merges the blocks into it, so no (Lq x Lk) matrix exists.
/// Causal descriptions skip key blocks that no row of the tile can see.
///
/// The key range may instead be cut into splits of one block each (flash-decoding): each split's
/// state is its block's, so splits are independent tasks, and a merge rescales their states to the
/// largest maximum and adds them. Without splits the state's split dimension has extent 1.
///
/// Halide dimension order is innermost first, so a (B, L, H, D) tensor is indexed (d, h, l, b).

#include <cstdint>
#include <vector>

#include "Halide.h"
#include "attngen/arguments.hpp"
#include "attngen/attention.hpp"
#include "attngen/codegen/modifiers.hpp"
#include "attngen/codegen/visibility_table.hpp"

namespace attngen::codegen {

/// How q.k is vectorised, which decides how K is staged for it.
enum class qk_layout {
  /// K staged transposed once per task (keys innermost); lanes hold keys, register tiles of 4 rows x
  /// 4 key vectors. The transpose is a gather per element: worth it when each key serves many rows.
  keys_in_lanes,
  /// K staged as stored (a dense copy per task); lanes hold the tile's rows, each key's element is a
  /// broadcast operand. No transpose; the tile's rows must be a multiple of the lanes.
  rows_in_lanes,
  /// K read where it is; lanes hold head_dim, then a horizontal sum per key and row: for few rows
  /// (decoding) or few keys.
  along_head_dim,
};

/// Tile sizes that shape the decomposition. Chosen by the schedule for a target.
/// A tile's rows are (query, group head) pairs: `queries_per_tile` queries times the heads that share
/// one kv head, so each key/value block is read once for the whole group.
struct blocking {
  int queries_per_tile = 16;  ///< queries per tile
  int key_block = 64;         ///< keys per block; a multiple of `lanes`
  int lanes = 16;             ///< float lanes the block reductions are vectorised over
  qk_layout qk = qk_layout::keys_in_lanes;  ///< a schedule choice, see qk_layout
  /// Keys one q.k register tile spans (a multiple of `lanes` with keys in lanes). Causal tiles skip
  /// the groups no row can see, whole.
  int qk_key_group = 64;
  /// Each key block is a split of the key range (flash-decoding); otherwise one split holds every key.
  bool split_per_block = false;
  /// With split_per_block: a task is a split of every kv head, its stages reading each key's row of
  /// every kv head before the next key's, so that a KV cache laid out token by token (a page's rows
  /// hold every kv head of a token) streams in order rather than in strides of a token's row.
  bool kv_heads_in_task = false;
  /// The state starts as the first key block's results rather than empty, which saves one merge (an
  /// exp per row and feature) per tile but takes a second copy of the block stages, so more code
  /// generation time: for tiles of few keys or few blocks, whose merges weigh with their products. Ignored
  /// with split_per_block or a mask modifier (which may hide the first block).
  bool first_block_starts_state = false;
  /// The log-sum-exp is the output Func's second value, stored through a buffer whose feature
  /// dimension has stride 0 (see attention_algorithm::output), rather than a Func of its own. An
  /// output of its own shares the tile's state only through `compute_with`, whose guards make loop
  /// partitioning copy the tile body: a fifth of the generation time of a CPU kernel. GPU kernels
  /// compute the state once for both outputs, so there the log-sum-exp is its own Func.
  bool lse_in_output = false;
  /// The modifiers read captured tensors at indices Halide's loop partitioning cannot solve for the
  /// key block or the row tile, so that such a read, vectorized over the keys or rows in lanes, is a
  /// gather in every block rather than a dense load in all but the last, which costs a copy of the
  /// whole block body for the last one (see modifier_index).
  bool modifier_reads_gather = false;
  /// The modifiers' reads of captured tensors at the key alone (such as t(b, kv)) are staged once per
  /// key block into Funcs of the block's keys (block_funcs::key_reads), gathered at clamped keys
  /// there, so the block's stages read them densely and unclamped: no copy of the block body for the
  /// last block, and no gathers in it. For scores with keys in vector lanes.
  bool stage_key_reads = false;
  /// Where the mask modifier reads captures (needs_visibility_table), a CPU kernel takes the run-time
  /// visibility table as its input (attention_algorithm::visibility_table) and reads this slice of
  /// it, its target's, on these tiles; -1: the kernel computes the table itself (GPU kernels).
  int visibility_slice = -1;
  /// q.k and weight x V as bf16 dot products with float sums (x86's vdpbf16ps): q, K and V are
  /// staged in pairs of head_dim elements or keys, the weights rounded to bf16 where they multiply V
  /// (as FlashAttention and oneDNN do). For bf16 descriptions with keys in lanes on targets with
  /// AVX512-BF16 (takes_bf16_dot_products in attngen/codegen/targets.hpp).
  bool bf16_dot_products = false;
  /// K and V rows are prefetched (software prefetch) this many keys ahead of the key whose row a
  /// stage reads, through the page table where paged: the hardware prefetchers stop at every page
  /// and 4 KiB boundary of a cache whose pages lie anywhere. 0: no prefetch.
  int prefetch_keys_ahead = 0;
  /// V is staged per split in the cache's own element type (attention_algorithm::value_elements)
  /// and widened, dequantised, where weight x V reads it, rather than staged as float.
  bool stage_value_elements = false;
  /// V is staged as float once per task (value_block, like K), so that every tile's weight x V reads
  /// dense rows: not through the page table, not widened from f16, not KVH x D apart.
  bool stage_values = false;

  /// Rows of a tile: queries_per_tile x group size.
  int rows(const attention_desc& desc) const { return queries_per_tile * desc.group_size(); }
};

/// One key block's contribution to a tile, every Func a pure function of the block index kb.
struct block_funcs {
  Halide::Func dot;             ///< (j, ii, kb, it, g, b): scaled q.k
  Halide::Func score;           ///< (j, ii, kb, it, g, b): masked score; masked keys hold a large negative
  /// Over a block's keys, where the block is partly hidden by the mask modifier: the score's update
  /// that applies the modifier per key. Defined only for a kernel with a mask modifier (the score's
  /// pure definition then leaves the modifier out, so blocks it shows whole never evaluate it).
  Halide::RDom modifier_masked_keys;
  /// Over a block's keys, where causality or the key length hides some of them from some row: the
  /// score's update that masks them. Defined only where those are the kernel's only masks before the
  /// modifier (no score modifier, additive or boolean mask); the pure definition is then q.k alone.
  Halide::RDom structurally_masked_keys;
  /// The score's updates' reductions, in the order they are defined (score.update(i) reduces over
  /// the i-th): the defined ones of structurally_masked_keys, modifier_masked_keys.
  std::vector<Halide::RDom> score_masking_passes() const {
    std::vector<Halide::RDom> passes;
    for (const Halide::RDom& keys : {structurally_masked_keys, modifier_masked_keys})
      if (keys.defined()) passes.push_back(keys);
    return passes;
  }
  Halide::Func block_max_lanes; ///< (lane, ii, kb, it, g, b): per-lane partial maxima
  Halide::Func block_max;       ///< (ii, kb, it, g, b): row maximum of the block, floored
  Halide::Func weight;          ///< (j, ii, kb, it, g, b): exp(score - block_max); exactly 0 when masked
  Halide::Func block_sum_lanes; ///< (lane, ii, kb, it, g, b)
  Halide::Func block_sum;       ///< (ii, kb, it, g, b)
  Halide::Func block_pv;        ///< (e, ii, kb, it, g, b): weight x V over the block
  /// (j, ii, kb, it, g, b): the weights as bf16, as they multiply V; only with bf16_dot_products.
  Halide::Func value_weights;
  /// The block sums add value_weights (bf16 dot products without dropout or a log-sum-exp output):
  /// the float weights need no storage of their own.
  bool sums_rounded_weights = false;
  /// (j, kb, b): the modifiers' reads at the key alone, one Func per distinct read; only with
  /// blocking::stage_key_reads.
  std::vector<Halide::Func> key_reads;
};

/// Where the algorithm reads its tensors and masks from: the operator's arguments, or another
/// pipeline's Funcs (the module's projections). Indices are Halide order, innermost first.
struct attention_sources {
  Halide::Func q;  ///< (d, h, i, b)
  Halide::Func k;  ///< (d, g, j, b)
  Halide::Func v;  ///< (e, g, j, b)
  /// (d, g, j, b), an int of no meaning whose evaluation prefetches the cache line that holds K's
  /// (V's) element at (d, g, j, b), through the page table where paged (clamped like the reads).
  Halide::Func k_prefetch, v_prefetch;
  /// (e, g, j, b): V's elements as the cache stores them, and `v_of_stored`, the float value of such
  /// an element of kv head g at key j of batch b (widened; times its row's scale for int8).
  /// Undefined where V is another pipeline's Func.
  Halide::Func v_stored;
  std::function<Halide::Expr(Halide::Expr stored, Halide::Expr g, Halide::Expr j, Halide::Expr b)> v_of_stored;
  Halide::Expr query_length, key_length;
  /// A bound on key_length that loop extents can use (key_length may be read from a buffer, which
  /// Halide's reduction domains cannot be bounded by); undefined: key_length itself.
  Halide::Expr key_extent;
  /// key_extent where defined, else key_length: an extent loops and scheduling expressions can use.
  Halide::Expr key_bound() const { return key_extent.defined() ? key_extent : key_length; }
  /// Zero in every call, in a form Halide cannot prove zero: the difference of two extents that the
  /// runtime checks equal and Halide's argument checks do not relate, clamped above at 0. Tile and
  /// block sizes add it where a constant size would make loop partitioning copy loop bodies.
  Halide::Expr unproven_zero;
  /// Where the call's queries and keys lie in the whole sequence (global positions): query i is at
  /// query_start + i of query_total, key j at key_start + j of key_total. Undefined totals: the call
  /// is the whole sequence (query_length, key_length).
  Halide::Expr query_start = 0, key_start = 0, query_total, key_total;
  /// The modifiers' leaves at query `query` and key `key` of the call (clamped into range; either
  /// may be undefined where the modifier reads none): their positions and lengths in the whole sequence.
  modifier_leaves leaves_at(Halide::Expr score, Halide::Expr batch, Halide::Expr head, Halide::Expr query,
                            Halide::Expr key, std::function<Halide::Expr(int)> key_read = {}) const {
    return {std::move(score),
            std::move(batch),
            std::move(head),
            query.defined() && query_total.defined() ? query + query_start : query,
            key.defined() && key_total.defined() ? key + key_start : key,
            query_total.defined() ? query_total : query_length,
            key_total.defined() ? key_total : key_length,
            std::move(key_read)};
  }
  /// With causality, query i sees keys j <= i + causal_offset, and every key j < causally_free_keys.
  Halide::Expr causal_offset;
  Halide::Expr causally_free_keys = 0;
  /// Optional, (j, i, h, b), called with indices clamped into range: a float added to the scaled
  /// score (values <= mask_out_threshold mask the key out).
  Halide::Func additive;
  /// Optional, (j, i, h, b), clamped indices: true where the key is masked out.
  Halide::Func hidden;
  /// Optional, (j, i, h, b), clamped indices: a factor on each weight where it multiplies V, not
  /// where it is summed (dropout: 0 or 1 / (1 - p)).
  Halide::Func value_weight_factor;
  /// Optional, (h): a learned logit per query head that joins each row's softmax denominator
  /// (attention sinks).
  Halide::Func sink;
  /// bf16 tensors are held as their bit patterns in uint16 (the output rounded to nearest even):
  /// for GPU targets, whose LLVM 14 backends cannot compile bfloat16 values.
  bool bfloat16_as_bits = false;
};

/// Every Func and parameter of one attention kernel, so a schedule can reach them.
struct attention_algorithm {
  attention_desc desc;
  blocking tiles;

  // The operator's inputs, in the order of the generated function's arguments (after the user
  // context); undefined when the algorithm reads another pipeline's Funcs.
  /// (B, Lq, H, D), (B, Lk, KVH, D), (B, Lk, KVH, Dv); paged, k and v are the pools (num_pages,
  /// page_size, KVH, D). A kernel of per-sequence lengths is called once per sequence b, its q, output
  /// and lse that sequence's (batch extent 1 from b), its key tensors cut to the sequence's keys where
  /// not paged: what the runtime passes (runtime/src/sequence_views.cpp).
  Halide::ImageParam q, k, v;
  Halide::ImageParam q_offsets;   ///< (B + 1) int32, read by the runtime alone; defined only if ragged
  Halide::ImageParam k_scale, v_scale;  ///< int8 keys' and values' scales, k's dims but D; defined only if i8
  Halide::ImageParam page_table;  ///< (B, max_pages) int32; defined only if paged
  Halide::ImageParam kv_lengths;  ///< (B) int32; defined only with per-sequence kv lengths
  Halide::ImageParam positions;   ///< (4) int32; defined only with global positions
  Halide::ImageParam sinks;       ///< (H) float32; defined only with attention sinks
  Halide::ImageParam mask;        ///< additive mask of desc.additive_mask_shape; defined only if present
  Halide::ImageParam key_padding; ///< (B, Lk) bytes; defined only if present
  capture_params captures;        ///< the modifiers' captured tensors and scalars
  /// (B, T x heads, tiles, blocks) uint8: the run-time visibility table's slices, one per CPU target
  /// on its tiles (attngen/runtime/visibility_slices.hpp), of which the kernel reads
  /// blocking::visibility_slice; defined only where the kernel takes it.
  Halide::ImageParam visibility_table;

  attention_sources sources;

  // Outputs.
  /// (e, h, i, b) over (B, Lq, H, Dv). With tiles.lse_in_output and desc.lse_output, a Tuple whose
  /// second value is row (i, h, b)'s log-sum-exp: its buffer is the (B, H, Lq) tensor seen as (B, Lq,
  /// H, Dv) with stride 0 over Dv, so each row's Dv writes land on its one element.
  Halide::Func output;
  Halide::Func lse;     ///< (i, h, b) over (B, H, Lq) float32; defined only if desc.lse_output and not in the output

  // Pure variables: e (v feature), d (qk feature), j (key within block), ii (row within tile),
  // kb (key block), it (query tile), s (key split), g (kv head), i (query), h (query head), b (batch), lane.
  // With bf16 dot products, p (element of a pair) and pair (pair of head_dim elements or keys).
  Halide::Var e{"e"}, d{"d"}, j{"j"}, ii{"ii"}, kb{"kb"}, it{"it"}, s{"s"}, g{"g"}, i{"i"}, h{"h"}, b{"b"},
      lane{"lane"}, p{"p"}, pair{"pair"};

  // Intermediate stages.
  Halide::Func query_tile;      ///< (d, ii, it, g, b): q as float, pre-multiplied by the scale
  /// (j, kb, b): key j of block kb clamped into the sequence's keys; defined only where the key
  /// length is read from a buffer (a paged cache), else an expression.
  Halide::Func clamped_keys;
  Halide::Func key_block;       ///< (j, d, kb, g, b): key blocks as float; the schedule picks their storage order
  /// key_block's elements without its prefetches, where it prefetches (blocking::prefetch_keys_ahead)
  Halide::Func key_block_unprefetched;
  Halide::Func value_block;     ///< (j, e, kb, g, b): value blocks as float (inlined on CPUs, staged on GPUs)
  /// (j, e, kb, g, b): value blocks in the cache's element type, with blocking::stage_value_elements
  Halide::Func value_elements;
  /// With bf16_dot_products, K and V as bf16 pairs, each pair one 32-bit lane of a dot product:
  /// (p, j, dp, kb, g, b) is element 2 dp + p of key j; (p, e, jp, kb, g, b) feature e of key 2 jp + p.
  /// The query tile is then q unscaled, as bf16 (the scale multiplies the dot products).
  Halide::Func key_pairs, value_pairs;
  /// One key block's stages: merged block by block into the state, or each one a split's state.
  block_funcs blocks;
  /// The first key block's, computed where the state starts; defined only if the state starts from it.
  block_funcs first_block;
  /// tiles.queries_per_tile, in a form Halide cannot prove constant (see algorithm_reading in
  /// codegen/src/operator/algorithm.cpp).
  Halide::Expr tile_queries_unproven;
  /// (kb, it, g, b): what the mask modifier shows of key block kb to the rows of tile `it`, as
  /// visibility bits (some_key_visible | some_key_hidden); defined only with a mask modifier. Blocks
  /// with no key visible are skipped; blocks with no key hidden skip the modifier.
  Halide::Func block_visibility;
  /// The run-time visibility table computed in the pipeline, on the tiles (GPU kernels); its table
  /// undefined for masks of positions alone, and where the table is an input.
  visibility_stages visibility_in_pipeline;
  /// (kb, it, g, b): whether a row of tile `it` sees a key of block kb; defined only with
  /// split_per_block and causality or a mask modifier.
  Halide::Func split_is_seen;
  Halide::Func state;           ///< (e, ii, it, s, g, b) Tuple(running max, running sum, accumulator) of a split
  Halide::Func merged_max;      ///< (ii, it, g, b): largest of the splits' maxima
  Halide::Func merged;          ///< (e, ii, it, g, b) Tuple(sum, accumulator) of all splits at merged_max
  Halide::Func normalized;      ///< (e, ii, it, g, b): accumulator / sum, 0 for fully masked rows

  Halide::RDom qk_reduction;     ///< over d
  Halide::RDom lane_reduction;   ///< over key_block / lanes lane groups
  Halide::RDom lane_collapse;    ///< over lanes
  Halide::RDom pv_reduction;     ///< over keys of a block
  Halide::RDom staged_values;    ///< over the keys of a block before Lk, which value_elements stages
  Halide::RDom key_blocks;       ///< over the key blocks merged, trimmed by causality; undefined with split_per_block
  Halide::RDom splits;           ///< over key splits; defined only with split_per_block

  /// The pipeline's parameter for one of the kernel's inputs (attngen/arguments.hpp).
  Halide::Argument parameter(const kernel_argument& argument) const;
  /// Inputs of the generated function, in order: the parameters of kernel_arguments(desc)'s inputs,
  /// then [visibility_table] (CPU variants of a mask modifier that reads captures).
  std::vector<Halide::Argument> arguments() const;
  /// Output Funcs, in order: output, [lse] (the log-sum-exp when not the output's second value).
  std::vector<Halide::Func> outputs() const;
};

/// Defines the operator for `desc` (which must be valid) with the given blocking, reading the
/// operator's arguments (q, k, v, mask, key_padding ImageParams). With `bfloat16_as_bits`, bf16
/// arguments and output are uint16 bit patterns (see attention_sources::bfloat16_as_bits).
attention_algorithm define_attention(const attention_desc& desc, const blocking& tiles, bool bfloat16_as_bits = false);

/// Defines the algorithm reading `sources`. The description's masks are ignored (the sources carry
/// them); its causality, modifiers (reading `captures`' parameters), heads, head dims, scale and
/// lse output apply.
attention_algorithm define_attention(const attention_desc& desc, const blocking& tiles, attention_sources sources);

/// The masked score of (key, query, head, batch) as the key blocks compute it, from its scaled q.k:
/// plus the additive mask, or a value <= masked_score_limit where the key is masked. For results
/// computed outside the blocks (the module's attention weights). Keys past the end score as masked.
Halide::Expr score_at(const attention_algorithm& a, Halide::Expr scaled_dot, Halide::Expr key, Halide::Expr query,
                      Halide::Expr head, Halide::Expr batch);
/// Scores at or below this are masked keys (attngen/attention.hpp's mask_out_threshold).
inline constexpr float masked_score_limit = mask_out_threshold;

/// A bf16 value held as its uint16 bits, widened to float.
Halide::Expr float_of_bfloat16_bits(Halide::Expr bits);
/// A float rounded to the nearest bf16 (ties to even), as uint16 bits; NaN stays NaN.
Halide::Expr bfloat16_bits_of(Halide::Expr value);

/// Halide element type for a DSL dtype.
Halide::Type halide_type_of(dtype t);

}  // namespace attngen::codegen
