#pragma once
/// The multi-head attention module as Halide Funcs: input projections, the attention algorithm
/// reading them, the output projection and the attention weights. No scheduling.
///
/// A module is defined whole (one pipeline: GPU code) or as one of its parts (CPU code), pipelines
/// that the runtime runs one after the other over float32 buffers it allocates. The parts let every
/// kernel variant share one compiled copy of the projections and the weights (see module_part); one
/// linear layer serves all four projections.
///
/// Halide dimension order is innermost first: a (B, L, E) tensor is indexed (c, i, b), an (L, B, E)
/// one (c, b, i). Projections are computed batch-major, (feature, position, batch), whatever the
/// inputs' layout. Keys appended by add_bias_kv and add_zero_attn are placed *before* the S projected
/// keys inside the kernel (so causal block skipping, which trims key blocks from the end, never skips
/// them); the weights output puts them after, in PyTorch's order.

#include <vector>

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/module.hpp"
#include "attngen/module_arguments.hpp"

namespace attngen::codegen {

/// Which pipeline of a module a module_algorithm defines (attngen/module_arguments.hpp lists each
/// one's arguments). Buffers between parts are float32, in Halide order (innermost first): projected
/// queries (n, i, b), keys and values (d, g, j, b) with the appended keys first (the runtime writes
/// those), and the attention's result (e, h, i, b).
using attngen::module_part;
using attngen::cpu_module_parts;
using attngen::takes_dropout_scalars;

/// Outputs per register tile of the CPU linear parts with `lanes` float lanes: four vectors with
/// AVX-512's 32 registers, two with 16 (schedule_module.cpp gives the rows and the measurements).
constexpr int linear_tile_outputs(int lanes) { return lanes >= 16 ? 4 * lanes : 2 * lanes; }

/// y(n, i, b) = x(c, i, b) . W(c, n) + bias(n): PyTorch's Linear with W stored (out, in). The
/// product reads W transposed, whole or in panels: one of weight_transposed and weight_panels is defined.
struct linear_funcs {
  Halide::Func weight;             ///< (c, n): W as the layer holds it, PyTorch's (out, in) layout
  Halide::Func weight_transposed;  ///< (n, c): W with outputs innermost, so outputs vectorise
  /// (n within its panel, c, panel): W transposed in panels of linear_tile_outputs outputs, each panel
  /// one dense run that a register tile streams in order; the CPU linear parts' layout
  Halide::Func weight_panels;
  Halide::Func product;            ///< (n, i, b): the sum over c
  Halide::Func result;             ///< (n, i, b): product + bias, as float
  Halide::RDom reduction;          ///< over c: (feature within group, group)
};

/// Every Func and parameter of one module kernel, so a schedule can reach them.
struct module_algorithm {
  mha_desc desc;
  module_part part = module_part::whole;
  /// bf16 tensors held as uint16 bits (GPU targets; see attention_sources::bfloat16_as_bits).
  bool bfloat16_as_bits = false;

  // Inputs, in the order of the generated function's arguments (after the user context).
  Halide::ImageParam query, key, value;                  ///< (B, L, E) / (B, S, kdim) / (B, S, vdim), or sequence-first;
                                                         ///< no key and value with self_attention
  Halide::ImageParam q_weight, k_weight, v_weight;       ///< (E, E), (KVE, kdim), (KVE, vdim): (out, in)
  Halide::ImageParam q_bias, k_bias, v_bias;             ///< (E), (KVE), (KVE); only with bias
  Halide::ImageParam bias_k, bias_v;                     ///< (KVE) each; only with add_bias_kv
  Halide::ImageParam out_weight, out_bias;               ///< (E, E), (E); the bias only with bias
  Halide::ImageParam key_padding;                        ///< (B, S); only with a key-padding mask
  Halide::ImageParam mask;                               ///< attn_mask of the described shape; only with one
  Halide::ImageParam d_output;                           ///< like the output; only in the backward part
  Halide::Param<bool> training{"training"};              ///< only with dropout: apply it in this call
  Halide::Param<uint64_t> seed{"seed"};                  ///< only with dropout
  /// Inputs of the projection and out_projection parts: x (c, i, b), W (c, n) in PyTorch's (out, in)
  /// layout and its bias (n), only with bias.
  Halide::ImageParam linear_input, linear_weight, linear_bias;
  /// Inputs of the attention and weights parts: projected queries (n, i, b), keys (d, g, j, b) and
  /// values (e, g, j, b).
  Halide::ImageParam projected_q_input, keys_input, values_input;

  // Outputs.
  Halide::Func output;   ///< (B, L, E) or (L, B, E); the projection parts' (n, i, b)
  Halide::Func weights;  ///< (B, H, L, S') per head or (B, L, S') averaged; only with need_weights

  Halide::Var c{"c"}, n{"n"}, i{"i"}, j{"j"}, h{"h"}, b{"b"}, column{"column"}, lane{"lane"};

  // Intermediate stages.
  /// Separate projections, or with self_attention one over the packed weights (qkv_projection); the
  /// projection parts' one linear layer (linear).
  linear_funcs q_projection, k_projection, v_projection, qkv_projection, out_projection, linear;
  /// (c, i, b): the query, key and value inputs as float, batch-major whatever their layout (key and
  /// value undefined with self_attention).
  Halide::Func query_in{"query_in"}, key_in{"key_in"}, value_in{"value_in"};
  Halide::Func projected_q, projected_k, projected_v;  ///< (n, i, b): whichever projection computed them
  Halide::Func keys, values;  ///< (d, g, j, b): extra keys first, then the projected keys
  Halide::Func keys_by_feature;  ///< (j, d, g, b): keys with keys innermost, for the weights' q.k
  Halide::Func score_dot;     ///< (j, i, h, b): for the weights output, q.k by kernel key order
  Halide::Func scores;        ///< (j, i, h, b): scaled and masked
  Halide::Func row_max_lanes, row_sum_lanes;  ///< (lane, i, h, b): lane-parallel partial row maxima and sums
  Halide::Func row_max, row_sum;  ///< (i, h, b): each row's largest score and its softmax denominator
  Halide::Func exponentials;  ///< (j, i, h, b): exp(score - row max), 0 where masked: computed once per score
  Halide::Func head_weights;  ///< (column, i, h, b): softmax weights after dropout, PyTorch's key order
  Halide::Func summed_weights;  ///< (column, i, b): head_weights summed over heads; only when averaged
  Halide::RDom score_reduction, weights_row_reduction, weights_lane_reduction, head_reduction;
  attention_algorithm attention;

  Halide::Expr query_length, input_key_length, key_length;  ///< L, S and S + extra keys

  /// The pipeline's parameter for an input of part_arguments(desc, part).
  Halide::Argument parameter(const module_argument& argument) const;
  /// Arguments of the generated function, in order: the part's inputs (part_arguments), then the
  /// dropout scalars where it takes them.
  std::vector<Halide::Argument> arguments() const;
  /// Output Funcs, in order: whole: output, [weights]; attention: attention.output; weights: weights;
  /// projection and out_projection: output.
  std::vector<Halide::Func> outputs() const;
};

/// Defines `part` of the module for `desc` (which must be valid); its attention uses `tiles`. With
/// `bfloat16_as_bits`, bf16 tensors are uint16 bit patterns. The weights part exists only with
/// need_weights. The backward part defines the whole module's inputs, projections and attention and
/// d_output; module_backward_algorithm defines the rest.
module_algorithm define_module(const mha_desc& desc, const blocking& tiles, bool bfloat16_as_bits = false,
                               module_part part = module_part::whole);

/// The part's name: projection, attention, out_projection, weights (whole: "whole").
const char* name_of(module_part part);

/// An element of one of the module's tensors as float (bf16 bits widened).
Halide::Expr as_float(const module_algorithm& m, Halide::Expr element);

/// A float as an element of the description's type (bf16 bits rounded to nearest even).
Halide::Expr as_element(const module_algorithm& m, Halide::Expr value);

/// The dropout hash as Halide Exprs: the uint32 of attngen::dropout_bits for the same arguments.
Halide::Expr dropout_bits(Halide::Expr seed, Halide::Expr batch, Halide::Expr head, Halide::Expr query,
                          Halide::Expr column, int heads);

}  // namespace attngen::codegen
