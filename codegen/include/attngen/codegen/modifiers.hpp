#pragma once
/// Lowering of a description's score and mask modifiers (attngen/modifiers.hpp) into Halide Exprs:
/// one function per node kind, shared by the CPU and GPU schedules (they schedule the Funcs that
/// hold these Exprs, not the Exprs).

#include <functional>
#include <vector>

#include "Halide.h"
#include "attngen/arguments.hpp"
#include "attngen/modifiers.hpp"

namespace attngen::codegen {

/// What the leaves of a modifier stand for at one score.
struct modifier_leaves {
  Halide::Expr score;  ///< float; undefined for mask modifiers
  Halide::Expr batch, head, query, key;
  Halide::Expr query_length, key_length;
  /// Where set, a read of a captured tensor at the key alone (reads_at_key_alone) is this function's
  /// value for the read's node, not the read: the caller stages such reads per key block.
  std::function<Halide::Expr(int node)> key_read;
};

/// A description's (4) int32 `positions` argument (attention_desc::with_global_positions), bounded.
Halide::ImageParam declare_positions();

/// The leaves at query 0 and key 0 of a call that `positions` places in a longer sequence: query and
/// key are its starts, the lengths its totals (attngen/arguments.hpp's global_position order).
modifier_leaves positions_origin(const Halide::ImageParam& positions);

/// The captures as the generated function's arguments: one ImageParam per declared tensor (Halide
/// order, innermost first), and one float buffer holding every scalar in declaration order.
struct capture_params {
  std::vector<Halide::ImageParam> tensors;
  Halide::ImageParam scalars;  ///< defined only when scalars are declared

  /// The ImageParams for `captures`, named after them.
  static capture_params declare(const capture_table& captures);
  /// In argument order: the tensors, then the scalars buffer.
  std::vector<Halide::Argument> arguments() const;
};

/// The modifier's value (float for score modifiers, bool for mask modifiers) at `leaves`. Tensor
/// reads are clamped into the tensors' extents.
Halide::Expr lower_modifier(const modifier_graph& graph, const capture_table& captures, const capture_params& params,
                            const modifier_leaves& leaves);

/// The value of node `node` of `graph` at `leaves` (lower_modifier is the last node's).
Halide::Expr lower_modifier_node(const modifier_graph& graph, const capture_table& captures,
                                 const capture_params& params, const modifier_leaves& leaves, int node);

/// d(modifier)/d(score) at `leaves` (with `by_node` a node's index: by that node's value, a capture's
/// read), from one derivative rule per node kind applied to the forward lowering's values
/// (codegen/src/operator/modifier_derivative.cpp). Other leaves are constants here.
Halide::Expr differentiate_modifier(const modifier_graph& graph, const capture_table& captures,
                                    const capture_params& params, const modifier_leaves& leaves, int by_node = -1);

/// `index` clamped into [0, length) for a gathered read, given `unproven_zero`: zero in every call, in
/// a form Halide cannot prove zero (attention_sources::unproven_zero). Where keys or rows lie in
/// vector lanes, Halide's loop partitioning removes a clamped vector of consecutive indices (a
/// captured tensor's read) from all but the last key block or row tile by copying the whole block
/// body for the last one. Bitwise or with the unproven zero leaves the index as it is but no longer a
/// vector of consecutive indices: nothing is copied, and the reads are gathers in every block.
Halide::Expr gathered_index(Halide::Expr index, Halide::Expr length, Halide::Expr unproven_zero);

/// Whether node `node` reads a captured tensor at indices that vary with the key but with none of
/// the score, the query and the head: the same value for every row of a key.
bool reads_at_key_alone(const modifier_graph& graph, int node);

}  // namespace attngen::codegen
