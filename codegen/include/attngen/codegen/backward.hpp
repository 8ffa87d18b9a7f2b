#pragma once
/// The attention's backward pass as Halide Funcs (FlashAttention-2's): the weights are recomputed
/// from the forward's saved log-sum-exp, so no (Lq x Lk) matrix is kept and the forward stays as it
/// is. With P = exp(score - lse), dO the output's gradient and delta = rowsum(dO * O):
///
///     dV_j = sum_i P_ij dO_i          dS_ij = P_ij (dO_i . V_j - delta_i) * score_mod'(s_ij)
///     dQ_i = scale sum_j dS_ij K_j    dK_j = scale sum_i dS_ij Q_i
///
/// summed over a GQA group's query heads for dK and dV. With dropout (the module's), each weight's
/// factor F (0, or 1 / (1 - p) where kept) scales P in dV and dO_i . V_j in dS. Each gradient is
/// reduced by the one task that owns its rows, in a fixed order: the same bits for any number of
/// threads.
///
/// Halide dimension order is innermost first: q and dq are (d, h, i, b), k and dk (d, g, j, b), v and
/// dv (e, g, j, b), the output and its gradient (e, h, i, b), lse (i, h, b).

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/codegen/algorithm.hpp"

namespace attngen::codegen {

/// The backward's parts of a generated kernel: its functions are <name>_halide_backward (one pass)
/// and <name>_halide_backward_two_passes (attngen/runtime/detail/variants.hpp's backward_passes).
inline constexpr const char* backward_part_name = "backward";
inline constexpr const char* backward_two_passes_part_name = "backward_two_passes";

/// Tile sizes of the backward's decomposition; chosen by its schedule.
struct backward_blocking {
  int key_block = 64;   ///< keys of a block: a dK/dV task's rows, a dQ task's step
  int query_tile = 32;  ///< queries of a tile: a dQ task's rows, a dK/dV task's step
  /// One pass (pass_sums): each (key block, query tile, head)'s weights, recomputed once, feed dK's,
  /// dV's and dQ's sums; needs key_block == query_tile. Otherwise two (key_sums, then dq_sum), each
  /// recomputing them.
  bool one_pass = false;
};

/// The weights and score gradients of a (key, query, head) as one gradient's tasks recompute them:
/// each gradient has its own copy, scheduled inside its own tiles.
struct recomputed_weights {
  Halide::Func dot;             ///< (j, i, h, b): q.k, before the scale
  Halide::Func weight;          ///< (j, i, h, b): P, 0 where the key is masked or past the ends
  Halide::Func dropped_weight;  ///< (j, i, h, b): P times the dropout's factor (P without dropout)
  Halide::Func value_gradient;  ///< (j, i, h, b): dO_i . V_j
  Halide::Func score_gradient;  ///< (j, i, h, b): dS, the loss's gradient of the scaled q.k
  Halide::RDom dot_reduction, value_reduction;  ///< over head_dim and v_head_dim
};

/// The gradient of a captured float tensor or of the captured scalars: the scores are cut into a
/// fixed number of chunks (query tiles dealt round-robin), each chunk scatters its contributions into
/// a partial sum of its own in a fixed order, and the partial sums are added chunk by chunk: the same
/// bits for any number of threads, and memory of chunks x the tensor, never Lq x Lk.
struct capture_gradient {
  static constexpr int chunks = 16;
  Halide::Func partial;  ///< (x..., chunk), Halide order: the tensor's dims (the scalars' index), then the chunk
  Halide::Func total;    ///< the gradient, of the tensor's shape (the scalars' count)
  /// Per read of the tensor (or of a scalar) in the score modifier: the update that scatters it (its
  /// reduction over keys, queries of a tile, tiles of the chunk, heads, batch) and its weights.
  std::vector<Halide::RDom> scores;
  std::vector<recomputed_weights> weights;
};

struct backward_algorithm {
  /// The forward's definition, whose inputs (q, k, v, masks, captures) and masking rule the backward
  /// reads; its own Funcs are not computed.
  attention_algorithm forward;
  backward_blocking tiles;

  // The operator's inputs beside the forward's (undefined in define_backward_of's).
  Halide::ImageParam output;    ///< (B, Lq, H, Dv), the forward's output
  Halide::ImageParam lse;       ///< (B, H, Lq) float32, the forward's log-sum-exp
  Halide::ImageParam d_output;  ///< (B, Lq, H, Dv), the loss's gradient of the output

  Halide::Var d{"d"}, e{"e"}, x{"x"}, i{"i"}, j{"j"}, h{"h"}, g{"g"}, b{"b"};
  Halide::Var ii{"ii"}, it{"it"};  ///< a query within its tile, the tile
  Halide::Var jj{"jj"}, jb{"jb"};  ///< a key within its block, the block
  Halide::Var z{"z"};              ///< a query head within its kv head's group
  Halide::Var slot{"slot"};        ///< pass_sums' sum: dK, dV, then dQ of each head in the group

  // Inputs as float, indices past the ends clamped.
  Halide::Func saved_output{"saved_output"};  ///< (e, h, i, b): the forward's output
  Halide::Func saved_lse{"saved_lse"};        ///< (i, h, b): the forward's log-sum-exp
  Halide::Func keys_by_key{"keys_by_key"};      ///< (j, d, g, b): K with the key innermost, so a
                                                ///< vector of keys' elements is one dense load
  Halide::Func values_by_key{"values_by_key"};  ///< (j, e, g, b): V likewise
  /// (d, j, g, b): K with a kv head's keys dense (stored ones lie KVH x D apart, often 4 KiB: one L1 set)
  Halide::Func keys_by_row{"keys_by_row"};
  Halide::Func queries{"queries"};  ///< (d, h, i, b): q as float
  Halide::Func output_gradient{"output_gradient"};  ///< (e, h, i, b): dO as float
  Halide::Func delta{"delta"};  ///< (i, h, b): rowsum(dO * O)
  Halide::RDom delta_features;  ///< delta's reduction

  recomputed_weights for_keys, for_dq;
  /// (x, jj, jb, it, z, g, b): dK's and dV's sums over query tile it of head z of the group, x over
  /// max(D, Dv) features.
  Halide::Func dk_tile_sums{"dk_tile_sums"}, dv_tile_sums{"dv_tile_sums"};
  Halide::RDom tile_rows;  ///< their reduction: the tile's queries
  /// dK and dV: over (query tile, head in the group), tiles the causal mask hides from the block skipped.
  Halide::RDom key_rows;
  Halide::Func key_sums{"key_sums"};  ///< (x, jj, jb, g, b): the tile sums added, dK's and dV's as a pair
  /// (d, ii, it, jb, h, b): dQ's sum (before the scale) over key block jb.
  Halide::Func dq_block_sums{"dq_block_sums"};
  Halide::RDom block_keys;  ///< dq_block_sums' reduction: the block's keys
  /// dQ: over key blocks, blocks the causal mask hides from the tile skipped.
  Halide::RDom query_columns;
  Halide::Func dq_sum{"dq_sum"};  ///< (d, ii, it, h, b): dq_block_sums added
  /// One pass: (x, p, block, slot, g, b): slot 0 and 1, dK's and dV's sums of key p of key block
  /// `block`; slot 2 + z, dQ's sum of query p of query tile `block` of head z of the group.
  Halide::Func pass_sums{"pass_sums"};
  /// Its update: (kind: dK, dV or dQ; head in the group; query tile; key block), tiles the causal mask
  /// hides from the block skipped.
  Halide::RDom pass;

  Halide::Func dq{"dq"};  ///< (d, h, i, b) in the element type
  Halide::Func dk{"dk"};  ///< (d, g, j, b)
  Halide::Func dv{"dv"};  ///< (e, g, j, b)
  Halide::Func d_sinks{"d_sinks"};  ///< (h) float32; defined only with attention sinks
  /// Per captured tensor, its gradient where it has one (attention_desc::capture_has_gradient); then
  /// the scalars' (attention_desc::scalars_have_gradient).
  std::vector<capture_gradient> d_captures;
  capture_gradient d_scalars;

  /// Inputs in order: q, k, v, [sinks], [mask], [key_padding], captures, output, lse, d_output.
  std::vector<Halide::Argument> arguments() const;
  /// Outputs in order: dq, dk, dv, [d_sinks], [each captured tensor's gradient], [d_scalars].
  std::vector<Halide::Func> outputs() const;
};

/// Defines the backward of `desc`'s operator (which must be valid, with dense keys and values and
/// dense queries). The forward's masks, causality, modifiers, scale and sinks apply. With
/// `bfloat16_as_bits` (GPU targets), bf16 tensors are uint16 bit patterns, as the forward's.
backward_algorithm define_attention_backward(const attention_desc& desc, const backward_blocking& tiles,
                                             bool bfloat16_as_bits = false);

/// The CPU's tiles, for one pass or two: 64 x 64 either way, so that both add the same terms in the
/// same order and write the same bits.
backward_blocking cpu_backward_blocking(bool one_pass);

/// The CPU schedule of cpu_backward_blocking's algorithm. One pass: a parallel task per (kv head,
/// batch) walks its key blocks and, in each, its query tiles and group heads, recomputing the weights
/// of a (key block, query tile, head) once for dK's, dV's and dQ's register tiles. Two passes (more
/// tasks, for more threads than kv heads x batch): dK and dV in tasks of a key block of one kv head,
/// dQ in tasks of a query tile of one head, each recomputing the weights.
void schedule_backward_cpu(backward_algorithm& a, const Halide::Target& target);

/// The backward of an attention algorithm whose sources another pipeline defines (the module's): from
/// the forward's output (e, h, i, b) and log-sum-exp (i, h, b) and the output's gradient (e, h, i, b),
/// all float. dq, dk, dv are float; the sources' dropout factor (value_weight_factor) applies.
backward_algorithm define_backward_of(attention_algorithm forward, const backward_blocking& tiles,
                                      const Halide::Func& output, const Halide::Func& lse,
                                      const Halide::Func& d_output);

/// Each row's log-sum-exp of the scores, recomputed from an algorithm's sources for a backward that
/// has no saved one: one pass over the keys keeping the running maximum and sum.
struct row_log_sum_exp {
  Halide::Func dot;    ///< (j, i, h, b): q.k
  Halide::Func state;  ///< (i, h, b): (maximum, sum of exponentials) over the keys
  Halide::Func lse;    ///< (i, h, b); the floor for a row with no visible key
  Halide::RDom features, keys;
};
row_log_sum_exp define_row_log_sum_exp(const attention_algorithm& forward);

/// Tile sizes of the GPU schedule, for define_attention_backward.
backward_blocking gpu_backward_blocking(const attention_desc& desc);

/// The GPU schedule (CUDA, OpenCL), for an algorithm defined with gpu_backward_blocking(): dK and dV
/// in a thread block per key block of one kv head, dQ in one per query tile of one head, each
/// recomputing a (key block, query tile, head)'s weights at a time in shared memory, a thread per
/// (key, query); each sum's features in slices of one thread each.
void schedule_backward_gpu(backward_algorithm& a);

}  // namespace attngen::codegen
