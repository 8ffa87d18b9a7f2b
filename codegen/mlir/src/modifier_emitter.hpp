#pragma once
// Emits a score or mask modifier's expression graph as arith/math/tensor operations inside a
// linalg.generic body, the way codegen/src/operator/modifiers.cpp lowers it to Halide: one function per node
// kind, with Halide's semantics (integer division rounds down, x / 0 is 0; tensor indices clamped).

#include <string>
#include <vector>

#include "attngen/attngen.hpp"
#include "ssa_writer.hpp"

namespace attngen::mlir_export {

/// SSA values, in the body being written, of what a modifier reads at one (b, h, q, kv).
struct modifier_leaves {
  std::string score;                      ///< f32; empty in a mask modifier
  std::string batch, head, query, key;    ///< i32
  std::string batch_count, query_length, key_length;  ///< i32: B, Lq, Lk
  int heads = 0;                          ///< H
};

/// The function arguments holding the captures, in declaration order.
struct capture_arguments {
  std::vector<std::string> tensors, tensor_types;  ///< SSA names and MLIR types
  std::vector<std::string> scalars;                ///< f32 SSA names
};

/// Writes `graph` and returns the SSA value of its root (f32, i32 or i1 by the root's kind).
std::string emit_modifier(ssa_writer& out, const modifier_graph& graph, const capture_table& captures,
                          const capture_arguments& arguments, const modifier_leaves& leaves);

}  // namespace attngen::mlir_export
