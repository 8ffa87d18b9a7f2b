#pragma once
/// The vector decoding path's workers (attngen/vector_decode/decode_task.hpp's run_worker), each
/// compiled for one instruction set in a translation unit of its own (vector_decode_worker.hpp), for
/// vector_decode.cpp to choose from by the CPU's report.

#include "attngen/vector_decode/call.hpp"

// GCC 11 and Clang 12 on x86-64 compile the AVX-512 intrinsics and target regions the workers use.
#if defined(__x86_64__) && (defined(__clang__) ? __clang_major__ >= 12 : __GNUC__ >= 11)
#define ATTNGEN_HAS_VECTOR_DECODE_WORKERS 1
#endif

namespace attngen::detail {

/// Takes `call`'s tasks until none is left, in `scratch` (vector_decode::scratch_for's bytes, 64-byte
/// aligned): for CPUs with AVX-512's Skylake set, an int8 cache's word products by vpmaddwd and vpaddd.
void run_vector_decode_worker_avx512(vector_decode::call* call, unsigned char* scratch);

/// run_vector_decode_worker_avx512 for CPUs with AVX512-VNNI as well: the word products by vpdpwssd.
void run_vector_decode_worker_vnni(vector_decode::call* call, unsigned char* scratch);

}  // namespace attngen::detail
