#pragma once
/// How the multi-head attention module runs on CPUs and on GPUs.

#include "Halide.h"
#include "attngen/codegen/module_algorithm.hpp"

namespace attngen::codegen {

/// Schedules every stage of `m`, one part of a module (not module_part::whole, which throws
/// std::invalid_argument), for `target`: each projection a tiled matrix product over all rows,
/// computed in parallel; the attention as schedule_cpu does; the weights in tiles of query rows.
void schedule_module_cpu(module_algorithm& m, const Halide::Target& target);

/// Schedules every stage of `m` (defined with gpu_blocking() tiles) for CUDA or OpenCL: each
/// projection a matrix product with a thread per output feature and a few rows in registers; the
/// attention as schedule_gpu does; with need_weights every score once, then the rows' maxima and sums,
/// then the weights, each stage one thread per element or row. Every stage runs on the device.
void schedule_module_gpu(module_algorithm& m);

}  // namespace attngen::codegen
