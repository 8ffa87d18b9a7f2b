#pragma once
/// Times attngen's kernels on a GPU: tensors in device memory, each timed call waited for.

#include <optional>

#include "cases.hpp"

namespace attngen::bench {

/// Median seconds of one call of `c` with every tensor on `device` (laid out (B, heads, L, D) as the
/// peers' are), the device synchronised after each call; nullopt (with the reason on stderr) when
/// the kernel has no code for the device or a call fails.
std::optional<double> time_attngen_on_device(const bench_case& c, device_kind device);

}  // namespace attngen::bench
