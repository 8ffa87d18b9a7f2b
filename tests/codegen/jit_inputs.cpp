#include "codegen/jit_inputs.hpp"

#include <cstdint>
#include <cstring>

#include "attngen/codegen/algorithm.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

// A Halide buffer with dense row-major `shape` (outermost first) holding `values` in `element`.
Halide::Buffer<> to_buffer(dtype element, const std::vector<int>& shape, const std::vector<float>& values) {
  std::vector<int> extents(shape.rbegin(), shape.rend());
  Halide::Buffer<> buffer(codegen::halide_type_of(element), extents);
  const auto bytes = encode(element, values);
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

// The problem's captured tensors and scalars, as `params` take them.
void set_captures(codegen::capture_params& params, const attention_problem& p) {
  const auto& d = p.desc;
  for (int n = 0; n < d.captures.tensor_count; ++n) {
    const bool integer = d.captures.tensors[n].type == capture_type::i32;
    const std::vector<int> shape = p.capture_shape(n);
    Halide::Buffer<> tensor(integer ? Halide::Int(32) : Halide::Float(32), std::vector<int>(shape.rbegin(), shape.rend()));
    for (std::size_t x = 0; x < p.captures[n].size(); ++x) {
      if (integer) static_cast<std::int32_t*>(tensor.data())[x] = std::int32_t(p.captures[n][x]);
      else static_cast<float*>(tensor.data())[x] = p.captures[n][x];
    }
    params.tensors[n].set(tensor);
  }
  if (d.captures.scalar_count > 0) {
    Halide::Buffer<float> scalars(d.captures.scalar_count);
    std::memcpy(scalars.data(), p.scalars.data(), p.scalars.size() * sizeof(float));
    params.scalars.set(scalars);
  }
}

}  // namespace attngen::testing
