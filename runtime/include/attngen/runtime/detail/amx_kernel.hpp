#pragma once
/// The runtime's side of the AMX path (docs/how-it-works.md#bf16-on-amx-tiles): a kernel's compiled
/// forward pass on AMX tiles, which calls on host tensors take where the CPU has AMX.

#include <cstddef>
#include <optional>

#include "attngen/amx/call.hpp"
#include "attngen/attention.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "attngen/runtime/detail/cpu_dispatch.hpp"

namespace attngen::detail {

/// A kernel's AMX forward pass, as the generator writes it (NAME_amx.cpp): its worker and the scratch
/// each worker takes. `worker` is null where the kernel has none, and `why_none` says why.
struct amx_kernel {
  amx::forward_worker worker;
  std::size_t scratch_bytes;
  const char* why_none;
};

/// The fewest rows (queries times the group's heads) a call needs to take the AMX path; fewer, as in
/// decoding, run the Halide code. B1 H32 KVH8 D128 Lk512 bf16, 2 threads, us, AMX against Halide:
/// 4 rows 146/105, 8 rows 155/188, 16 rows 169/350.
inline constexpr std::int64_t amx_min_rows = 8;

/// The AMX call of `kernel` for a valid call (validate(desc, args) passed, 0 < B, Lq, Lk) on host
/// tensors of at least amx_min_rows rows, on a CPU reporting `cpu` with AMX, with head_dim contiguous
/// and lse along Lq, key padding along Lk and sinks contiguous; its tasks hold row groups for
/// `threads` threads. Nothing for any other call, which runs the Halide code.
std::optional<amx::forward_call> amx_call_of(const attention_desc& desc, const attention_args& args,
                                             const amx_kernel& kernel, const cpu_report& cpu, int threads);

/// Runs `call` on the thread pool: a worker per thread, each with scratch of its own.
void run_amx(const amx_kernel& kernel, amx::forward_call& call);

}  // namespace attngen::detail
