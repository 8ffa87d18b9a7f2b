#pragma once
/// oneDNN (libdnnl 2.6) as the strongest CPU peer measured here: matmul with an output scale, an
/// in-place causal mask add, softmax_v2, matmul. GQA without copying K/V: Q is laid out as
/// (B·KVH, G·Lq, D), the peer's preferred layout, prepared before timing.

#include "cases.hpp"

namespace attngen::bench {

/// True when the benchmark was built with oneDNN.
bool onednn_available();

/// Median seconds of the peer on `c` (same rotation of K/V caches as attngen's run); NaN where
/// oneDNN has no implementation for its element type on this CPU (f16 without AVX512-FP16).
double time_onednn(const bench_case& c);

}  // namespace attngen::bench
