#pragma once
/// One vector decoding worker (vector_decode_workers.hpp), for the translation unit that includes this
/// after defining ATTNGEN_VECTOR_DECODE_FEATURES (the target's features, a string),
/// ATTNGEN_VECTOR_DECODE_WORKER (the worker's name) and, for AVX512-VNNI, ATTNGEN_VECTOR_DECODE_VNNI.
/// The decoding code alone is compiled for the target, its functions of internal linkage
/// (attngen/simd/vectors.hpp); what is included before it is compiled for the runtime's own target.

#include "vector_decode_workers.hpp"

#if defined(ATTNGEN_HAS_VECTOR_DECODE_WORKERS)
#define ATTNGEN_VECTOR_DECODE_AVX512 1
#define ATTNGEN_VECTOR_DECODE_PRAGMA(text) _Pragma(#text)
#if defined(__clang__)
#define ATTNGEN_VECTOR_DECODE_TARGET(features) \
  ATTNGEN_VECTOR_DECODE_PRAGMA(clang attribute push(__attribute__((target(features))), apply_to = function))
ATTNGEN_VECTOR_DECODE_TARGET(ATTNGEN_VECTOR_DECODE_FEATURES)
#else
#define ATTNGEN_VECTOR_DECODE_TARGET(features) ATTNGEN_VECTOR_DECODE_PRAGMA(GCC target(features))
#pragma GCC push_options
ATTNGEN_VECTOR_DECODE_TARGET(ATTNGEN_VECTOR_DECODE_FEATURES)
#endif

#include "attngen/vector_decode/decode_task.hpp"

namespace {

void run_worker_on_target(attngen::vector_decode::call* call, unsigned char* scratch) {
  attngen::vector_decode::run_worker(call, scratch);
}

}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// Compiled for the runtime's own target: a call from code that never asked for the target's features.
void attngen::detail::ATTNGEN_VECTOR_DECODE_WORKER(vector_decode::call* call, unsigned char* scratch) {
  run_worker_on_target(call, scratch);
}
#endif
