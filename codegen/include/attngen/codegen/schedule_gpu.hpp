#pragma once
/// How the attention algorithm runs on GPUs (CUDA, OpenCL): one thread block per (query tile, kv
/// head, batch), so the rows of a GQA group share each key/value block staged in shared memory.

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"

namespace attngen::codegen {

/// True when `target` has a GPU API attngen schedules for (CUDA or OpenCL).
bool is_gpu_target(const Halide::Target& target);

/// The GPU API's name as used in generated file and function names: "cuda" or "opencl".
const char* gpu_api_name(const Halide::Target& target);

/// Tile sizes for a GPU: about 16 (query, group head) rows per tile, and the longest key block whose
/// staged keys and values, with the tile's query and running state, fit the shared memory every
/// CUDA and OpenCL device offers (48 KiB, less a margin).
blocking gpu_blocking(const attention_desc& desc);

/// Schedules every stage of `a`, defined with gpu_blocking(). Throws std::logic_error when the
/// tiles would not fit in shared memory (head dims beyond what any tiling fits).
void schedule_gpu(attention_algorithm& a);

/// Bytes of shared memory one thread block of `a` uses.
int gpu_shared_memory_bytes(const attention_desc& desc, const blocking& tiles);

}  // namespace attngen::codegen
