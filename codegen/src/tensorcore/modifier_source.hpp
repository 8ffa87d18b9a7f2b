#pragma once
// Writes a score or mask modifier's expression graph as C++ statements for the tensor-core variant,
// one function per node kind, with the Halide lowering's semantics (codegen/src/operator/modifiers.cpp;
// integer division rounds down, x / 0 is 0, tensor indices are clamped: attngen/tensorcore/modifier_math.hpp).

#include <string>

#include "attngen/attngen.hpp"

namespace attngen::codegen::tensorcore_source {

/// Statements defining `<prefix>0`, `<prefix>1`, ... (one constant per node, in the graph's order),
/// reading the leaves `score` (score modifiers), `b`, `h`, `q`, `kv`, `q_len`, `kv_len` and the
/// captures in `in` (attngen::tensorcore::variant_inputs); the root is the last. Each statement is
/// one line, indented by `indent`.
std::string modifier_statements(const modifier_graph& graph, const capture_table& captures, const std::string& prefix,
                                const std::string& indent);

/// Statements defining `<prefix>0`, `<prefix>1`, ...: each node's range over a tile
/// (attngen/tensorcore/modifier_ranges.hpp), reading the leaves `b`, `h`, `q`, `kv`, `q_len`,
/// `kv_len` as ranges and the captures in `in`; the root, a `ranges::truth` for a mask, is the last.
std::string modifier_range_statements(const modifier_graph& graph, const capture_table& captures,
                                      const std::string& prefix, const std::string& indent);

/// `value` as a C++ float literal that reads back exactly (hexadecimal).
std::string float_literal(float value);

}  // namespace attngen::codegen::tensorcore_source
