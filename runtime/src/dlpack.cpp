#include "attngen/runtime/dlpack.hpp"

#include <cstdint>
#include <string>

#include "attngen/runtime/detail/dense_layout.hpp"

namespace attngen {

namespace {

// kDLBool, added in DLPack 0.8 (Debian 12 has 0.6): by its value, so that either version builds.
constexpr std::uint8_t dl_bool_code = 6;

std::string type_code_name(std::uint8_t code) {
  switch (code) {
    case kDLInt: return "kDLInt";
    case kDLUInt: return "kDLUInt";
    case kDLFloat: return "kDLFloat";
    case kDLOpaqueHandle: return "kDLOpaqueHandle";
    case kDLBfloat: return "kDLBfloat";
    case kDLComplex: return "kDLComplex";
    case dl_bool_code: return "kDLBool";
  }
  return "type code " + std::to_string(code);
}

std::string device_type_name(int type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
  }
  return "device type " + std::to_string(type);
}

// attngen's element type of a DLPack one, or false.
bool element_type(const DLDataType& type, dtype& result) {
  const int code = type.code, bits = type.bits;
  if (code == kDLFloat && bits == 32) result = dtype::f32;
  else if (code == kDLFloat && bits == 16) result = dtype::f16;
  else if (code == kDLBfloat && bits == 16) result = dtype::bf16;
  else if ((code == kDLUInt || code == dl_bool_code) && bits == 8) result = dtype::u8;
  else if (code == kDLInt && bits == 32) result = dtype::i32;
  else return false;
  return true;
}

status to_view(const DLTensor& tensor, tensor_view& view, std::string_view name) {
  const std::string prefix = std::string(name) + ": ";
  if (tensor.ndim < 0 || tensor.ndim > tensor_view::max_rank)
    return status(error_code::wrong_rank, prefix + "DLPack tensor has " + std::to_string(tensor.ndim) +
                                              " dimensions; attngen takes at most " +
                                              std::to_string(tensor_view::max_rank));
  if (tensor.ndim > 0 && tensor.shape == nullptr)
    return status(error_code::null_pointer,
                  prefix + "DLPack tensor of " + std::to_string(tensor.ndim) + " dimensions has a null shape");
  if (tensor.dtype.lanes != 1)
    return status(error_code::wrong_dtype, prefix + "DLPack element type has " + std::to_string(tensor.dtype.lanes) +
                                               " lanes (a vector type); attngen takes 1 lane");
  dtype type{};
  if (!element_type(tensor.dtype, type))
    return status(error_code::wrong_dtype, prefix + "DLPack element type " + type_code_name(tensor.dtype.code) + " " +
                                               std::to_string(tensor.dtype.bits) +
                                               " bits is not supported; attngen takes kDLFloat 32 (f32), "
                                               "kDLFloat 16 (f16), kDLBfloat 16 (bf16), kDLUInt 8 or kDLBool 8 "
                                               "(u8), kDLInt 32 (i32)");
  device_kind device{};
  switch (tensor.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost: device = device_kind::host; break;
    case kDLCUDA: device = device_kind::cuda; break;
    case kDLOpenCL:
      if (tensor.byte_offset != 0)
        return status(error_code::wrong_device,
                      prefix + "DLPack OpenCL tensor has byte_offset " + std::to_string(tensor.byte_offset) +
                          "; attngen takes an OpenCL buffer from its first byte (byte_offset 0)");
      device = device_kind::opencl;
      break;
    default:
      return status(error_code::wrong_device,
                    prefix + "DLPack device " + device_type_name(tensor.device.device_type) +
                        " is not supported; attngen takes kDLCPU, kDLCUDAHost, kDLCUDA or kDLOpenCL");
  }

  tensor_view result;
  // The offset is added as an integer: `data` is a device address on CUDA, and may be null (a tensor
  // without elements; the kernel's checks name it if it has elements).
  if (tensor.data != nullptr)
    result.data = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(tensor.data) + tensor.byte_offset);
  result.type = type;
  result.rank = tensor.ndim;
  for (int d = 0; d < tensor.ndim; ++d) result.shape[d] = tensor.shape[d];
  if (tensor.strides != nullptr)
    for (int d = 0; d < tensor.ndim; ++d) result.strides[d] = tensor.strides[d];
  else
    detail::dense_strides(result.shape, result.rank, result.strides);
  result.device = device;
  view = result;
  return {};
}

}  // namespace

status from_dlpack(const DLTensor& tensor, tensor_view& view, std::string_view name) {
  return to_view(tensor, view, name);
}

status from_dlpack(const DLTensor& tensor, const_tensor_view& view, std::string_view name) {
  tensor_view result;
  if (status s = to_view(tensor, result, name); !s) return s;
  static_cast<tensor_view&>(view) = result;
  view.read_only = true;
  return {};
}

}  // namespace attngen
