#pragma once
/// Used by generated kernel wrappers only: turns validated tensor views into Halide buffers and calls
/// the generated function, capturing Halide runtime errors into the returned status.

#include "HalideRuntime.h"
#include "attngen/runtime/attention_backward_call.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "attngen/runtime/detail/amx_kernel.hpp"
#include "attngen/runtime/detail/tensorcore_launch.hpp"
#include "attngen/runtime/detail/variants.hpp"
#include "attngen/runtime/detail/visibility_slices.hpp"
#include "attngen/runtime/module_call.hpp"

namespace attngen::detail {

/// Calls the generated Halide function. `buffers` are the kernel's arguments in the schema's order
/// (attngen::kernel_arguments: q, [q_offsets], k, v, ..., output, [lse]), the captured scalars as one
/// float buffer, and the visibility table (CPU only) after the inputs where the variant takes it.
using generated_entry = int (*)(void* user_context, halide_buffer_t* const* buffers);

/// A kernel's code for each place a call can run. GPU functions take bf16 tensors as uint16 bits.
template <typename Entry>
struct kernel_entries {
  Entry cpu;               ///< the CPU variant for the call's shape
  Entry cuda = nullptr;    ///< null when the kernel has no CUDA code
  Entry opencl = nullptr;  ///< null when the kernel has no OpenCL code
};

/// A backward pass's code: on the CPU in one pass and in two (choose_backward_passes picks), on GPUs
/// as kernel_entries.
template <typename Entry>
struct backward_entries {
  Entry cpu_one_pass;
  Entry cpu_two_passes;
  Entry cuda = nullptr;    ///< null when the kernel has no CUDA code
  Entry opencl = nullptr;  ///< null when the kernel has no OpenCL code

  /// The entries for a call of `tasks` one-pass tasks (kv heads x batch) on the pool's threads now.
  kernel_entries<Entry> for_tasks(std::int64_t tasks) const;
};

/// Computes an operator's run-time visibility table (what its mask modifier, which reads captures,
/// shows of each key block to each query tile) into the last of `buffers`: the captured tensors,
/// [captured scalars as one float buffer], the table, uint8 (B, heads, tiles, blocks) over tiles of
/// `tile_queries` queries and blocks of `block_keys` keys.
using generated_visibility_entry = int (*)(void* user_context, halide_buffer_t* const* buffers,
                                           std::int32_t query_length, std::int32_t key_length,
                                           std::int32_t tile_queries, std::int32_t block_keys);

/// The visibility table a CPU variant takes after its captures, where the mask modifier reads them:
/// computed on the variant's finest tiles over the kernel's targets, then sliced per target
/// (attngen/runtime/detail/visibility_slices.hpp).
struct visibility_entry {
  generated_visibility_entry compute = nullptr;  ///< null: the variant takes no table
  int tile_queries = 1, block_keys = 1;           ///< the finest tiles
  int heads = 1;                                  ///< kv heads the table tells apart
  int targets = 1;                                ///< the kernel's CPU targets
  const visibility_ratio* ratios = nullptr;       ///< each target's tiles in finest ones (`targets` of them)
};

/// An operator kernel's code: its CPU variants, indexed by kernel_variant, with the visibility
/// table each takes (null: none does), and its GPU code. The runtime picks the variant for the
/// call's shape, or for each sequence's when sequences differ in length.
struct attention_kernel {
  const generated_entry* cpu_variants = nullptr;  ///< kernel_variant_count of them
  const visibility_entry* visibility = nullptr;   ///< kernel_variant_count of them, or null
  int single_query_threshold = 1;                 ///< of the CPU targets (choose_variant)
  generated_entry cuda = nullptr;                 ///< null when the kernel has no CUDA code
  generated_entry opencl = nullptr;               ///< null when the kernel has no OpenCL code
  /// With CUDA code: the tensor-core forward pass, which calls on CUDA device tensors laid out for it
  /// take (tensorcore_launch_of); its fatbin is null where the description has none.
  const tensorcore_kernel* tensorcore = nullptr;
  /// The forward pass on AMX tiles, which calls on host tensors take where the CPU has AMX
  /// (amx_call_of); its worker is null where the description has none.
  const amx_kernel* amx = nullptr;
};

/// Validates, then runs the call where its tensors are (attngen/runtime/gpu.hpp); on the host, with
/// the visibility table computed first where the variant takes one. A description with ragged
/// queries or per-sequence kv lengths runs sequence by sequence, each on views of its own rows (the
/// batch index kept: see codegen's attention_algorithm::q). Throws nothing: running out of host
/// memory is error_code::kernel_failed, "out of memory while running the attention kernel".
status run_attention_kernel(const attention_desc& desc, const attention_args& args,
                            const attention_kernel& kernel) noexcept;

/// Validates, then runs a backward pass's generated function where the call's tensors are: each entry
/// takes the buffers of backward_arguments(desc) in order, the captured scalars as one float buffer.
/// With no query or no key every gradient is filled with 0. Throws nothing.
status run_attention_backward(const attention_desc& desc, const attention_backward_args& args,
                              const backward_entries<generated_entry>& entries) noexcept;

/// Calls a generated module function with `buffers`, passing `training` and `seed` on only when the
/// function takes them (dropout). A GPU function is the whole module: its buffers are query, key,
/// value, q_weight, k_weight, v_weight, [q_bias, k_bias, v_bias], [bias_k, bias_v], out_weight,
/// [out_bias], [key_padding_mask], [attn_mask], output, [attn_weights], as the description declares
/// them. CPU code comes in parts (module_cpu_parts).
using generated_module_entry = int (*)(void* user_context, halide_buffer_t* const* buffers, bool training,
                                       std::uint64_t seed);

/// A module's CPU code: parts run one after the other over float32 buffers the runtime allocates,
/// projected queries (B, L, E), keys and values (B, S', KVH, D) with the appended keys first (written
/// by the runtime), and the attention's result (B, L, H, D). Members are named as codegen::name_of
/// names the parts.
struct module_cpu_parts {
  /// The call's variant: projected queries, keys, values, [key_padding_mask], [attn_mask]; result.
  generated_module_entry attention = nullptr;
  /// One linear layer, x (B, rows, in) of the element type, weight (out, in), [bias (out)]; float32
  /// (B, rows, out): run for the queries, keys and values, and with f32 elements for the output.
  generated_module_entry projection = nullptr;
  /// The same from float32 x to the element type: the output of f16 and bf16 modules, else null.
  generated_module_entry out_projection = nullptr;
  /// Projected queries, keys, [key_padding_mask], [attn_mask]; attn_weights. Null without need_weights.
  generated_module_entry weights = nullptr;
};

/// A module's code for each place a call can run.
struct module_entries {
  module_cpu_parts cpu;
  generated_module_entry cuda = nullptr;    ///< null when the kernel has no CUDA code
  generated_module_entry opencl = nullptr;  ///< null when the kernel has no OpenCL code
};

/// Validates, then runs the call where its tensors are (attngen/runtime/gpu.hpp). Throws nothing:
/// running out of host memory is error_code::kernel_failed, "out of memory while running the module
/// kernel".
status run_module_kernel(const mha_desc& desc, const mha_args& args, const module_entries& entries) noexcept;

/// Validates, then runs a module's backward pass (one pipeline on every device) where the call's
/// tensors are: each entry takes the buffers of module_backward_arguments(desc) in order. With no
/// output row every gradient is filled with 0. Throws nothing.
status run_module_backward(const mha_desc& desc, const mha_backward_args& args,
                           const backward_entries<generated_module_entry>& entries) noexcept;

/// The kernel variant for a module call's shape (any variant when the arguments are malformed).
kernel_variant variant_for(const mha_args& args, const mha_desc& desc, int single_query_threshold);

}  // namespace attngen::detail
