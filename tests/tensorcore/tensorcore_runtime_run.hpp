#pragma once
/// A generated tensor-core variant run by the tile code on the host model of the warp with the
/// parameters the runtime builds for a call (detail::tensorcore_launch_of): the problem's tensors as
/// the runtime's views, marked as CUDA device tensors, so the mapping from a call to a launch (strides,
/// broadcast mask dimensions, padding, captures, scalars, the grid) is checked without a GPU.

#include <limits>
#include <stdexcept>
#include <vector>

#include "attngen/runtime/detail/tensorcore_launch.hpp"
#include "kernels/aot_call.hpp"
#include "tensorcore/tensorcore_host_run.hpp"
#include "tensorcore/tensorcore_run.hpp"

namespace attngen::testing {

/// The record of a kernel of `Variant`'s shape (the fatbin is never read here).
template <typename Variant>
attngen::detail::tensorcore_kernel tensorcore_record() {
  using tiles = tensorcore::variant_tiles<Variant>;
  static const unsigned char no_device_code = 0;
  return {&no_device_code, 1, "", "", tiles::rows, Variant::warps * 32, tiles::shared_bytes, Variant::head_dim,
          Variant::v_head_dim};
}

/// Every tensor of `args` but the index tensors (host memory for every call) marked as a CUDA device
/// tensor (they stay where they are).
inline void mark_as_cuda(attention_args& args) {
  for (tensor_view* t : {&args.q, &args.k, &args.v, &args.k_scale, &args.v_scale, &args.mask, &args.key_padding,
                         &args.sinks, &args.output, &args.lse})
    if (!t->empty()) t->device = device_kind::cuda;
  for (tensor_view& capture : args.captures)
    if (!capture.empty()) capture.device = device_kind::cuda;
}

template <typename Variant>
tensorcore_result run_tensorcore_through_runtime(const attention_problem& p) {
  aot_call call(p);
  attention_args args = call.args();
  mark_as_cuda(args);
  const auto launch = attngen::detail::tensorcore_launch_of(p.desc, args, tensorcore_record<Variant>());
  if (!launch) throw std::runtime_error("the runtime does not send this call to the tensor-core kernel");
  Variant variant{};
  static_cast<tensorcore::variant_state&>(variant) = launch->variant;
  tensorcore::run_forward_on_host<Variant::element, Variant::head_dim, Variant::warps>(launch->params, variant);
  return {call.output(), call.lse()};
}

/// `batch`'s call, its tensors laid out by its description's KV-cache layouts, launched as the runtime
/// launches it on CUDA device tensors and run on the host model: one launch for every sequence, its
/// keys split across `key_splits` blocks and merged as the runtime's driver does (1: not split).
template <typename Variant>
void run_tensorcore_batch_through_runtime(sequence_batch& batch, int key_splits) {
  attention_args args = batch.args();
  mark_as_cuda(args);
  const auto launch = attngen::detail::tensorcore_launch_of(batch.desc, args, tensorcore_record<Variant>());
  if (!launch) throw std::runtime_error("the runtime does not send this batch to the tensor-core kernel");
  const tensorcore::grid3 expected = tensorcore::forward_grid(launch->params, tensorcore::variant_tiles<Variant>::rows);
  if (launch->grid.x != expected.x || launch->grid.y != expected.y || launch->grid.z != expected.z)
    throw std::runtime_error("the launch's grid is not the kernel's");
  Variant variant{};
  static_cast<tensorcore::variant_state&>(variant) = launch->variant;
  tensorcore::forward_params params = launch->params;
  std::vector<float> workspace;
  if (key_splits > 1) {
    params.key_splits = key_splits;
    workspace.assign(std::size_t(tensorcore::split_workspace_floats(params, Variant::v_head_dim)),
                     std::numeric_limits<float>::quiet_NaN());
    params.partial = workspace.data();
  }
  run_on_host(params, variant);
}

}  // namespace attngen::testing
