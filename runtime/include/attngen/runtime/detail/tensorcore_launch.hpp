#pragma once
/// The runtime's side of the tensor-core path (docs/gpu.md#the-tensor-core-path): a
/// kernel's compiled forward pass, and the launch a call of it makes.

#include <cstddef>
#include <optional>

#include "attngen/attention.hpp"
#include "attngen/runtime/attention_call.hpp"
#include "attngen/tensorcore/launch_shape.hpp"
#include "attngen/tensorcore/variant_inputs.hpp"

namespace attngen::detail {

/// A kernel's tensor-core forward pass, as the generator writes it (NAME_tensorcore.cpp): its device
/// code for sm_80 and sm_90 (and PTX for later GPUs) as a fatbin, the kernel's name, the merge's of
/// calls whose keys are split across blocks (split_merge.hpp) and its block. `fatbin` is null where
/// the description has none (that file says why).
struct tensorcore_kernel {
  const unsigned char* fatbin;
  std::size_t fatbin_bytes;
  const char* function;
  const char* merge_function;
  int block_rows;          ///< rows, (query, head) pairs, per thread block
  int threads;             ///< per block
  unsigned shared_bytes;   ///< dynamic shared memory per block
  int head_dim;            ///< of q and k
  int v_head_dim;          ///< of v and the output
};

/// What one call launches: the kernel's two parameters and its grid.
struct tensorcore_launch {
  tensorcore::forward_params params;
  tensorcore::variant_state variant;
  tensorcore::grid3 grid;
};

/// The tile code's inputs (here and in the AMX path) for a valid call (validate(desc, args) passed;
/// 0 < B, Lq, Lk for dense tensors of equal lengths, any lengths with a KV-cache layout) whose tensors
/// are laid out as the tile code reads them: head_dim contiguous, q and output rows aligned to two
/// elements, K and V rows to `kv_row_alignment` bytes, lse along Lq, key padding along Lk, sinks and
/// the index tensors (q_offsets, kv_lengths, a page table's rows) contiguous. Nothing for any other
/// call. The parameters point at the index tensors where the call holds them (host memory).
struct tile_code_inputs {
  tensorcore::forward_params params;
  tensorcore::variant_state variant;
};
std::optional<tile_code_inputs> tile_code_inputs_of(const attention_desc& desc, const attention_args& args,
                                                    int kv_row_alignment);

/// The launch of `kernel` for a valid call (as tile_code_inputs_of) whose tensors are all CUDA device
/// tensors, the index tensors excepted (host memory: launch_tensorcore copies them), laid out as the
/// tile code reads them, K and V rows 16-byte aligned (cp.async). Nothing for any other call, which
/// runs the Halide CUDA code.
std::optional<tensorcore_launch> tensorcore_launch_of(const attention_desc& desc, const attention_args& args,
                                                      const tensorcore_kernel& kernel);

}  // namespace attngen::detail
