#pragma once
/// The training cases (descriptions with .with_backward()): the forward, which saves its output and
/// log-sum-exp, then the backward, timed together as one training step's attention.

#include <cmath>

#include "cases.hpp"

namespace attngen::bench {

/// FLOPs of the backward counted as this many times the forward's (FlashAttention-2's convention:
/// five matrix products to the forward's two).
inline constexpr double backward_flops_factor = 2.5;

/// Median seconds of `c`'s forward and of its backward (each -1 when a call fails), tensors (B, L,
/// heads, D) dense as a training loop holds them.
struct training_times {
  double forward_seconds = NAN, backward_seconds = NAN;
};
training_times time_training(const bench_case& c, int threads);

}  // namespace attngen::bench
