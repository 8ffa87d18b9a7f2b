#pragma once
/// The runtime's side of the vector decoding path (attngen/vector_decode/call.hpp, decode_task.hpp):
/// calls of f32 queries, a few rows per kv head, over a dense or paged cache, run by hand-written
/// AVX-512 code where the CPU has it, whatever the kernel (the path reads no modifier, so it is
/// compiled once, into the runtime).

#include <optional>

#include "attngen/runtime/attention_call.hpp"
#include "attngen/runtime/detail/cpu_dispatch.hpp"
#include "attngen/vector_decode/call.hpp"

namespace attngen::detail {

/// Whether the runtime was built with the path's AVX-512 code (GCC 11, Clang 12 and later on x86-64),
/// one instance for AVX-512's Skylake set and one with AVX512-VNNI.
bool has_vector_decoding();

/// Whether a CPU reporting `cpu` runs the path's AVX-512 code.
constexpr bool runs_vector_decoding(const cpu_report& cpu) { return cpu.avx512_skylake_set; }

/// The decoding call of a valid call (validate(desc, args) and, with sequence lengths, its sequence
/// checks passed) that the path takes, whatever the CPU: vector_decode::refusal(desc) is null, the
/// tensors are on the host with head_dim contiguous, each sequence 0 to vector_decode::max_rows rows
/// per kv head. Its tasks and partial results live in the calling thread's memory, until its next call.
std::optional<vector_decode::call> decode_call_of(const attention_desc& desc, const attention_args& args);

/// decode_call_of where a CPU reporting `cpu` runs the path and the runtime has it.
std::optional<vector_decode::call> vector_decode_call_of(const attention_desc& desc, const attention_args& args,
                                                         const cpu_report& cpu);

/// Runs `call` (from vector_decode_call_of for `cpu`) on the thread pool, with AVX512-VNNI's word
/// products where `cpu` reports them, then merges each sequence's tasks into the call's output and
/// log-sum-exp.
void run_vector_decoding(vector_decode::call& call, const cpu_report& cpu);

}  // namespace attngen::detail
