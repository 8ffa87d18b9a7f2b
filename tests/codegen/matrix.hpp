#pragma once
/// Runs one description over a matrix of batch sizes and sequence lengths against the reference.

#include <string>
#include <vector>

#include "attngen/attention.hpp"

namespace attngen::testing {

/// The awkward lengths every configuration is checked at: 1, a prime below a vector, one above,
/// a prime far from any tile size, and a multiple of every tile.
inline const std::vector<int> awkward_lengths = {1, 7, 17, 113, 512};

/// Compiles `desc` once per kernel variant through the JIT and checks every variant at every
/// (batch, Lq, Lk) combination, Lq != Lk included: the run-time choice of variant must never matter.
/// `target`: a Halide target string this CPU runs (e.g. the AVX2 or baseline member of a fat
/// library); empty means the best the CPU supports. `finer_target`: another target of the same fat
/// library, whose finer tiles give the visibility table's finest grid (see jit_kernel).
void check_against_reference(const attention_desc& desc, const std::vector<int>& lengths,
                             const std::vector<int>& batches, const std::string& target = "",
                             const std::string& finer_target = "");

}  // namespace attngen::testing
