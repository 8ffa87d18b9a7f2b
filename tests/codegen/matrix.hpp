#pragma once
/// Runs one description over a matrix of batch sizes and sequence lengths against the reference.

#include "attngen/attention.hpp"
#include "support/configurations.hpp"

namespace attngen::testing {

/// Compiles `desc` once per kernel variant through the JIT, for the matrix's target, and checks every
/// variant at every (batch, Lq, Lk) of the matrix, Lq != Lk included: the run-time choice of variant
/// must never matter.
void check_against_reference(const attention_desc& desc, const length_matrix& matrix);

}  // namespace attngen::testing
