#include "codegen/jit_runner.hpp"

#include <cstring>

#include "Halide.h"
#include "attngen/codegen/algorithm.hpp"
#include "attngen/codegen/schedule_cpu.hpp"
#include "attngen/codegen/targets.hpp"

namespace attngen::testing {

namespace {

// A Halide buffer of `type` with dense row-major `shape` (outermost first), filled from floats.
Halide::Buffer<> to_buffer(Halide::Type type, const std::vector<int>& shape, const std::vector<float>& values) {
  std::vector<int> extents(shape.rbegin(), shape.rend());
  Halide::Buffer<> buffer(type, extents);
  auto* bytes = static_cast<std::uint8_t*>(buffer.data());
  for (std::size_t n = 0; n < values.size(); ++n) {
    if (type == Halide::Float(32)) {
      std::memcpy(bytes + 4 * n, &values[n], 4);
    } else if (type == Halide::BFloat(16)) {
      std::uint32_t bits;
      std::memcpy(&bits, &values[n], 4);
      const std::uint16_t half = bits >> 16;
      std::memcpy(bytes + 2 * n, &half, 2);
    } else {
      const _Float16 half = static_cast<_Float16>(values[n]);
      std::memcpy(bytes + 2 * n, &half, 2);
    }
  }
  return buffer;
}

std::vector<float> to_floats(const Halide::Buffer<>& buffer) {
  std::vector<float> values(buffer.number_of_elements());
  const auto* bytes = static_cast<const std::uint8_t*>(buffer.data());
  for (std::size_t n = 0; n < values.size(); ++n) {
    if (buffer.type() == Halide::Float(32)) {
      std::memcpy(&values[n], bytes + 4 * n, 4);
    } else if (buffer.type() == Halide::BFloat(16)) {
      std::uint16_t half;
      std::memcpy(&half, bytes + 2 * n, 2);
      const std::uint32_t bits = std::uint32_t(half) << 16;
      std::memcpy(&values[n], &bits, 4);
    } else {
      _Float16 half;
      std::memcpy(&half, bytes + 2 * n, 2);
      values[n] = static_cast<float>(half);
    }
  }
  return values;
}

}  // namespace

struct jit_kernel::impl {
  Halide::Target target;
  codegen::attention_algorithm algorithm;
  Halide::Pipeline pipeline;
};

jit_kernel::jit_kernel(const attention_desc& desc) : impl_(std::make_unique<impl>()) {
  impl_->target = codegen::running_cpu_target();
  impl_->algorithm = codegen::define_attention(desc, codegen::cpu_blocking(desc, impl_->target));
  codegen::schedule_cpu(impl_->algorithm, impl_->target);
  impl_->pipeline = Halide::Pipeline(impl_->algorithm.outputs());
  impl_->pipeline.compile_jit(impl_->target);
}

jit_kernel::~jit_kernel() = default;

jit_result jit_kernel::run(const attention_problem& p) {
  auto& a = impl_->algorithm;
  const auto& d = p.desc;
  const Halide::Type element = codegen::halide_type_of(d.element_type);
  const int B = p.batch, Lq = p.query_length, Lk = p.key_length;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  a.q.set(to_buffer(element, {B, Lq, H, D}, p.q));
  a.k.set(to_buffer(element, {B, Lk, KVH, D}, p.k));
  a.v.set(to_buffer(element, {B, Lk, KVH, Dv}, p.v));
  if (d.has_additive_mask()) a.mask.set(to_buffer(element, p.mask_shape(), p.mask));
  if (d.has_key_padding_mask()) {
    Halide::Buffer<std::uint8_t> padding(Lk, B);
    std::memcpy(padding.data(), p.key_padding.data(), p.key_padding.size());
    a.key_padding.set(padding);
  }
  Halide::Buffer<> output(element, {Dv, H, Lq, B});
  std::vector<Halide::Buffer<>> outputs = {output};
  Halide::Buffer<float> lse(Lq, H, B);
  if (d.lse_output) outputs.push_back(lse);
  impl_->pipeline.realize(Halide::Realization(outputs), impl_->target);
  jit_result r;
  r.output = to_floats(output);
  if (d.lse_output) r.lse = to_floats(lse);
  return r;
}

}  // namespace attngen::testing
