#pragma once
/// Tensor views of DLPack tensors (`DLTensor`), the exchange format of PyTorch, JAX, CuPy, NumPy and
/// TensorFlow: a tensor any of them exports is passed to a kernel without copying it.
///
/// This header needs DLPack's <dlpack/dlpack.h> (Debian: libdlpack-dev), unless DLPack's types are
/// already declared, e.g. by PyTorch's <ATen/dlpack.h> included first (the same header). The rest of
/// attngen does not need DLPack; these functions are in attngen::runtime when attngen was built
/// with DLPack found.
///
/// ```cpp
/// #include <ATen/DLConvertor.h>   // at::toDLPack
/// #include "attngen/runtime/dlpack.hpp"
/// DLManagedTensor* q_dl = at::toDLPack(q);   // a torch::Tensor; q_dl->deleter(q_dl) when done
/// attngen::const_tensor_view q_view;
/// attngen::status s = attngen::from_dlpack(q_dl->dl_tensor, q_view, "q");
/// ```

#include <string_view>

#ifndef DLPACK_DLPACK_H_
#include <dlpack/dlpack.h>
#endif

#include "attngen/runtime/status.hpp"
#include "attngen/runtime/tensor.hpp"

namespace attngen {

/// Sets `view` to the tensor `tensor` describes: its data (`data` + `byte_offset`), shape and strides
/// (DLPack's are in elements, outermost first, as attngen's; none means dense row-major), element
/// type and device. The view does not own the memory: the DLPack tensor's owner must keep it alive
/// for as long as the view is used.
///
/// Element types: kDLFloat 32 is f32, kDLFloat 16 f16, kDLBfloat 16 bf16, kDLUInt 8 and kDLBool 8
/// (a boolean mask) u8, kDLInt 32 i32; lanes must be 1. Devices: kDLCPU and kDLCUDAHost (pinned host
/// memory) are device_kind::host, kDLCUDA is device_kind::cuda and kDLOpenCL device_kind::opencl (a
/// cl_mem, which attngen takes from its first byte: byte_offset must be 0). A view carries no device
/// index: a CUDA tensor's call runs in gpu_options::cuda_context (attngen/runtime/gpu.hpp), which must
/// be a context of the tensor's `device.device_id` (for PyTorch, its current context on that device).
///
/// A tensor these cannot describe is refused with a status whose message starts with `name`:
/// wrong_rank for more than 4 dimensions, null_pointer for a shape (of a tensor with dimensions)
/// that is null, wrong_dtype for another element type or lanes, wrong_device for another device (or
/// an OpenCL tensor with a byte offset). On failure `view` is left as it was. What a kernel checks on
/// every call (positive strides, the innermost stride 1, alignment, extents, data present) is left to
/// it: the call names the tensor by its argument then. Throws nothing but std::bad_alloc, like
/// validate().
///
/// This overload gives a writable view (read_only false), for outputs: DLPack does not say whether
/// the memory may be written.
status from_dlpack(const DLTensor& tensor, tensor_view& view, std::string_view name = "DLTensor");

/// The same, as a view of const memory (read_only set), for inputs: a typed call does not take it as
/// an output.
status from_dlpack(const DLTensor& tensor, const_tensor_view& view, std::string_view name = "DLTensor");

}  // namespace attngen
