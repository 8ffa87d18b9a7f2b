#include <cstdint>

#include "HalideRuntime.h"
#include "attngen/runtime/detail/amx_kernel.hpp"
#include "attngen/runtime/detail/tensorcore_launch.hpp"
#include "attngen/runtime/detail/thread_pool.hpp"
#include "thread_scratch.hpp"

namespace attngen::detail {

namespace {

struct amx_job {
  const amx_kernel* kernel;
  amx::forward_call* call;
};

int run_worker(void*, int, std::uint8_t* closure) {
  const auto* job = reinterpret_cast<const amx_job*>(closure);
  job->kernel->worker(job->call, thread_scratch(job->kernel->scratch_bytes));
  return 0;
}

}  // namespace

std::optional<amx::forward_call> amx_call_of(const attention_desc& desc, const attention_args& args,
                                             const amx_kernel& kernel, const cpu_report& cpu, int threads) {
  if (kernel.worker == nullptr || args.q.device != device_kind::host || !runs_amx_path(cpu)) return std::nullopt;
  if (args.q.shape[1] * (desc.num_heads / desc.effective_kv_heads()) < amx_min_rows) return std::nullopt;
  const auto inputs = tile_code_inputs_of(desc, args, int(size_of(desc.element_type)));
  if (!inputs) return std::nullopt;
  amx::forward_call call;
  call.params = inputs->params;
  call.variant = inputs->variant;
  call.task_groups = amx::choose_task_groups(call.params, threads);
  call.tasks = amx::forward_tasks(call.params, call.task_groups);
  return call;
}

void run_amx(const amx_kernel& kernel, amx::forward_call& call) {
  install_thread_pool();
  const int workers = pool_threads() < call.tasks ? pool_threads() : call.tasks;
  amx_job job{&kernel, &call};
  halide_do_par_for(nullptr, &run_worker, 0, workers, reinterpret_cast<std::uint8_t*>(&job));
}

}  // namespace attngen::detail
