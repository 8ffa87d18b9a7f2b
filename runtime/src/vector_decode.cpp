#include "attngen/runtime/detail/vector_decode.hpp"

#include <cstdint>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/runtime/detail/thread_pool.hpp"
#include "thread_scratch.hpp"
#include "vector_decode_workers.hpp"

namespace attngen::detail {

namespace {

// Memory a call's tasks write, kept in the calling thread for its next call.
struct decode_memory {
  std::vector<int> first_task;
  std::vector<float> partial_out, partial_max_sum;
};

#if defined(ATTNGEN_HAS_VECTOR_DECODE_WORKERS)
template <void (*worker)(vector_decode::call*, unsigned char*)>
int run_worker(void*, int, std::uint8_t* closure) {
  auto* call = reinterpret_cast<vector_decode::call*>(closure);
  const vector_decode::scratch_layout layout =
      vector_decode::scratch_for(call->p.head_dim, call->p.kv_heads, call->row_capacity);
  worker(call, thread_scratch(layout.bytes));
  return 0;
}
#endif

int merge_sequence(void*, int b, std::uint8_t* closure) {
  vector_decode::merge_sequence(*reinterpret_cast<const vector_decode::call*>(closure), b);
  return 0;
}

}  // namespace

bool has_vector_decoding() {
#if defined(ATTNGEN_HAS_VECTOR_DECODE_WORKERS)
  return true;
#else
  return false;
#endif
}

std::optional<vector_decode::call> decode_call_of(const attention_desc& desc, const attention_args& args) {
  if (vector_decode::refusal(desc) != nullptr || args.q.device != device_kind::host) return std::nullopt;
  for (const tensor_view* t : {&args.q, &args.k, &args.v, &args.output})
    if (t->strides[t->rank - 1] != 1) return std::nullopt;
  vector_decode::params p;
  p.heads = desc.num_heads;
  p.kv_heads = desc.effective_kv_heads();
  p.head_dim = desc.qk_head_dim;
  p.kv_element = desc.effective_kv_element();
  p.scale = desc.effective_scale();
  p.causal = desc.causal_mode;
  p.q = static_cast<const float*>(args.q.data);
  p.out = static_cast<float*>(args.output.data);
  // Dense q and out are (B, Lq, H, D), ragged (total_q, H, D); lse (B, H, Lq) or (H, total_q).
  if (desc.is_ragged()) {
    p.q_offsets = static_cast<const std::int32_t*>(args.q_offsets.data);
    p.batch = int(args.q_offsets.shape[0]) - 1;
    p.q_query = args.q.strides[0], p.q_head = args.q.strides[1];
    p.out_query = args.output.strides[0], p.out_head = args.output.strides[1];
    if (desc.lse_output) p.lse_head = args.lse.strides[0], p.lse_query = args.lse.strides[1];
  } else {
    p.batch = int(args.q.shape[0]);
    p.query_length = int(args.q.shape[1]);
    p.q_batch = args.q.strides[0], p.q_query = args.q.strides[1], p.q_head = args.q.strides[2];
    p.out_batch = args.output.strides[0], p.out_query = args.output.strides[1], p.out_head = args.output.strides[2];
    if (desc.lse_output)
      p.lse_batch = args.lse.strides[0], p.lse_head = args.lse.strides[1], p.lse_query = args.lse.strides[2];
  }
  if (desc.lse_output) p.lse = static_cast<float*>(args.lse.data);
  if (desc.has_sinks) p.sinks = static_cast<const float*>(args.sinks.data);
  const int row_capacity = vector_decode::row_capacity_of(p);
  if (row_capacity > vector_decode::max_rows) return std::nullopt;
  p.k = args.k.data;
  p.v = args.v.data;
  p.k_outer = args.k.strides[0], p.k_token = args.k.strides[1], p.k_head = args.k.strides[2];
  p.v_outer = args.v.strides[0], p.v_token = args.v.strides[1], p.v_head = args.v.strides[2];
  if (desc.has_kv_scales()) {
    p.k_scale = static_cast<const float*>(args.k_scale.data);
    p.v_scale = static_cast<const float*>(args.v_scale.data);
    p.ks_outer = args.k_scale.strides[0], p.ks_token = args.k_scale.strides[1], p.ks_head = args.k_scale.strides[2];
    p.vs_outer = args.v_scale.strides[0], p.vs_token = args.v_scale.strides[1], p.vs_head = args.v_scale.strides[2];
  }
  if (desc.is_paged()) {
    p.page_size = desc.kv_page_size;
    p.page_table = static_cast<const std::int32_t*>(args.page_table.data);
    p.table_stride = args.page_table.strides[0];
    p.key_capacity = int(args.page_table.shape[1]) * desc.kv_page_size;
  } else {
    p.key_capacity = int(args.k.shape[1]);
  }
  if (desc.has_kv_lengths()) p.kv_lengths = static_cast<const std::int32_t*>(args.kv_lengths.data);

  thread_local decode_memory memory;
  vector_decode::call call;
  call.p = p;
  call.row_capacity = row_capacity;
  memory.first_task.assign(std::size_t(p.batch) + 1, 0);
  for (int b = 0; b < p.batch; ++b) memory.first_task[b + 1] = memory.first_task[b] + vector_decode::tasks_of(p, b);
  call.first_task = memory.first_task.data();
  call.tasks = memory.first_task.back();
  const std::size_t states = std::size_t(call.tasks) * p.kv_heads * call.row_capacity;
  if (memory.partial_out.size() < states * p.head_dim) memory.partial_out.resize(states * p.head_dim);
  if (memory.partial_max_sum.size() < states * 2) memory.partial_max_sum.resize(states * 2);
  call.partial_out = memory.partial_out.data();
  call.partial_max_sum = memory.partial_max_sum.data();
  return call;
}

std::optional<vector_decode::call> vector_decode_call_of(const attention_desc& desc, const attention_args& args,
                                                         const cpu_report& cpu) {
  if (!has_vector_decoding() || !runs_vector_decoding(cpu)) return std::nullopt;
  return decode_call_of(desc, args);
}

void run_vector_decoding(vector_decode::call& call, const cpu_report& cpu) {
  install_thread_pool();
#if defined(ATTNGEN_HAS_VECTOR_DECODE_WORKERS)
  if (call.tasks > 0) {
    const int workers = pool_threads() < call.tasks ? pool_threads() : call.tasks;
    halide_do_par_for(nullptr,
                      cpu.avx512_vnni ? &run_worker<run_vector_decode_worker_vnni>
                                      : &run_worker<run_vector_decode_worker_avx512>,
                      0, workers, reinterpret_cast<std::uint8_t*>(&call));
  }
#endif
  halide_do_par_for(nullptr, &merge_sequence, 0, call.p.batch, reinterpret_cast<std::uint8_t*>(&call));
}

}  // namespace attngen::detail
