#pragma once
/// The attention's backward pass as Halide Funcs (FlashAttention-2's): the weights are recomputed
/// from the forward's saved log-sum-exp, so no (Lq x Lk) matrix is kept and the forward stays as it
/// is. With P = exp(score - lse), dO the output's gradient and delta = rowsum(dO * O):
///
///     dV_j = sum_i P_ij dO_i          dS_ij = P_ij (dO_i . V_j - delta_i) * score_mod'(s_ij)
///     dQ_i = scale sum_j dS_ij K_j    dK_j = scale sum_i dS_ij Q_i
///
/// summed over a GQA group's query heads for dK and dV. Each gradient is reduced by the one task that
/// owns its rows, in a fixed order: the same bits for any number of threads.
///
/// Halide dimension order is innermost first: q and dq are (d, h, i, b), k and dk (d, g, j, b), v and
/// dv (e, g, j, b), the output and its gradient (e, h, i, b), lse (i, h, b).

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/codegen/algorithm.hpp"

namespace attngen::codegen {

/// The backward's part of a generated kernel: its function is <name>_halide_backward.
inline constexpr const char* backward_part_name = "backward";

/// Tile sizes of the backward's decomposition; chosen by its schedule.
struct backward_blocking {
  int key_block = 64;   ///< keys a dK/dV task owns
  int query_tile = 32;  ///< queries whose weights are recomputed at once
  int lanes = 8;        ///< float lanes
};

/// The weights and score gradients of a (key, query, head) as one gradient's tasks recompute them:
/// each gradient has its own copy, scheduled inside its own tiles.
struct recomputed_weights {
  /// (j, d, g, b), (j, e, g, b): keys and values with the key innermost, so that the products below
  /// load a vector of keys' elements densely.
  Halide::Func keys_transposed, values_transposed;
  Halide::Func dot;             ///< (j, i, h, b): the forward's scaled q.k
  Halide::Func weight;          ///< (j, i, h, b): P, 0 where the key is masked
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

  Halide::ImageParam output;    ///< (B, Lq, H, Dv), the forward's output
  Halide::ImageParam lse;       ///< (B, H, Lq) float32, the forward's log-sum-exp
  Halide::ImageParam d_output;  ///< (B, Lq, H, Dv), the loss's gradient of the output

  Halide::Var d{"d"}, e{"e"}, i{"i"}, j{"j"}, h{"h"}, g{"g"}, b{"b"};

  Halide::Func delta{"delta"};  ///< (i, h, b): rowsum(dO * O)
  recomputed_weights for_dv, for_dk, for_dq;
  Halide::RDom group_rows;      ///< over (query, head in the group), for dK and dV
  Halide::RDom keys;            ///< over keys, for dQ
  Halide::Func dv_sum{"dv_sum"}, dk_sum{"dk_sum"}, dq_sum{"dq_sum"};  ///< float sums, before the scale

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
/// dense queries). The forward's masks, causality, modifiers, scale and sinks apply.
backward_algorithm define_attention_backward(const attention_desc& desc, const backward_blocking& tiles);

/// The CPU schedule: dK and dV in parallel tasks of a key block of one kv head, dQ in tasks of a query
/// tile of one head, each recomputing the weights of its tile.
void schedule_backward_cpu(backward_algorithm& a, const Halide::Target& target);

}  // namespace attngen::codegen
