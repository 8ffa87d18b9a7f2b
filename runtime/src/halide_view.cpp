#include "halide_view.hpp"

#include <cstdint>

namespace attngen::detail {

namespace {

// GPU code takes bf16 as its bits (Halide 14's GPU backends cannot compile bfloat16 values).
halide_type_t halide_type_for(dtype t, bool bfloat16_as_bits = false) {
  switch (t) {
    case dtype::f32: return halide_type_t(halide_type_float, 32);
    case dtype::f16: return halide_type_t(halide_type_float, 16);
    case dtype::bf16: return bfloat16_as_bits ? halide_type_t(halide_type_uint, 16) : halide_type_t(halide_type_bfloat, 16);
    case dtype::u8: return halide_type_t(halide_type_uint, 8);
    case dtype::i32: return halide_type_t(halide_type_int, 32);
    case dtype::i8: return halide_type_t(halide_type_int, 8);
  }
  return halide_type_t();
}

}  // namespace

halide_view::halide_view(const tensor_view& t, bool bfloat16_as_bits) {
  buffer.host = static_cast<std::uint8_t*>(t.data);
  buffer.type = halide_type_for(t.type, bfloat16_as_bits);
  buffer.dimensions = t.rank;
  buffer.dim = dims;
  for (int d = 0; d < t.rank; ++d) {
    const int from = t.rank - 1 - d;
    dims[d].min = 0;
    dims[d].extent = static_cast<std::int32_t>(t.shape[from]);
    dims[d].stride = static_cast<std::int32_t>(t.shape[from] > 1 ? t.strides[from] : 1);
  }
}

}  // namespace attngen::detail
