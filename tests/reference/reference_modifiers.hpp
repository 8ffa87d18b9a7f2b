#pragma once
/// The modifier graphs of a description evaluated in float64 by a plain interpreter, independently of
/// codegen (which lowers the same graphs to Halide): the reference's view of the DSL's semantics.

#include "attngen/modifiers.hpp"
#include "support/problem.hpp"

namespace attngen::testing {

/// Where a modifier is evaluated: one score of one (batch, head, query, key) of a problem.
struct modifier_point {
  double score = 0.0;
  int batch = 0, head = 0, query = 0, key = 0;
};

/// The graph's value at `at`: numbers as doubles (integers exact; integer division rounds down and
/// x / 0 is 0), booleans as 1 or 0. Captured tensors are read from `p` with indices clamped into
/// their extents.
double evaluate_modifier(const modifier_graph& graph, const attention_problem& p, const modifier_point& at);

/// The score modifier's derivative with respect to the score at `at` (forward-mode, in float64): 0
/// through floor, ceil, round and every integer or boolean node.
double modifier_score_derivative(const modifier_graph& graph, const attention_problem& p, const modifier_point& at);

/// A float read of a captured tensor (or a captured scalar) in a modifier, at one point: which
/// element it reads and the modifier's derivative with respect to the value read.
struct capture_read_derivative {
  bool scalar = false;
  int capture = 0;          ///< the tensor's (scalar's) declaration index
  std::size_t offset = 0;   ///< the element read, row-major in the tensor (clamped indices)
  double derivative = 0.0;
};

/// Each float capture read of `graph` at `at`, with the derivative of the graph's value by it.
std::vector<capture_read_derivative> modifier_capture_derivatives(const modifier_graph& graph,
                                                                  const attention_problem& p, const modifier_point& at);

}  // namespace attngen::testing
