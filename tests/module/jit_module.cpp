#include "module/jit_module.hpp"

#include <cstring>
#include <stdexcept>

#include "Halide.h"
#include "attngen/codegen/kernel_pipeline.hpp"
#include "attngen/codegen/module_algorithm.hpp"
#include "attngen/codegen/schedule_module.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/variants.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

namespace {

Halide::Buffer<> to_buffer(Halide::Type type, const host_tensor& t) {
  std::vector<int> extents(t.shape.rbegin(), t.shape.rend());
  Halide::Buffer<> buffer(type, extents);
  if (type == Halide::UInt(8)) {
    auto* bytes = static_cast<std::uint8_t*>(buffer.data());
    for (std::size_t n = 0; n < t.values.size(); ++n) bytes[n] = t.values[n] != 0.0f;
    return buffer;
  }
  const dtype element = type == Halide::Float(32) ? dtype::f32 : type == Halide::Float(16) ? dtype::f16 : dtype::bf16;
  const auto bytes = encode(element, t.values);
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

}  // namespace

struct jit_module::impl {
  Halide::Target target;
  codegen::module_algorithm algorithm;
  Halide::Pipeline pipeline;
};

jit_module::jit_module(const mha_desc& desc, kernel_variant variant) : impl_(std::make_unique<impl>()) {
  impl_->target = codegen::running_cpu_target();
  impl_->algorithm = codegen::define_module(
      desc, codegen::cpu_variant_blocking(desc.attention_operator(), impl_->target, variant));
  codegen::schedule_module_cpu(impl_->algorithm, impl_->target);
  impl_->pipeline = codegen::kernel_pipeline(impl_->algorithm.outputs());
  impl_->pipeline.compile_jit(impl_->target);
}

jit_module::~jit_module() = default;

module_result jit_module::run(const module_problem& p) {
  auto& m = impl_->algorithm;
  const Halide::Type element = codegen::halide_type_of(p.desc.element_type);
  const std::pair<const char*, Halide::ImageParam*> params[] = {
      {"query", &m.query},       {"key", &m.key},           {"value", &m.value},   {"q_weight", &m.q_weight},
      {"k_weight", &m.k_weight}, {"v_weight", &m.v_weight}, {"q_bias", &m.q_bias}, {"k_bias", &m.k_bias},
      {"v_bias", &m.v_bias},     {"bias_k", &m.bias_k},     {"bias_v", &m.bias_v}, {"out_weight", &m.out_weight},
      {"out_bias", &m.out_bias}, {"key_padding", &m.key_padding}, {"attn_mask", &m.mask}};
  for (const auto& [name, param] : params) {
    const auto found = p.inputs.find(name);
    if (!param->defined()) {
      if (found != p.inputs.end()) throw std::logic_error(std::string("problem has ") + name + ", kernel does not");
      continue;
    }
    if (found == p.inputs.end()) throw std::logic_error(std::string("problem lacks ") + name);
    param->set(to_buffer(param->type(), found->second));
  }
  if (p.desc.has_dropout()) {
    m.training.set(p.training);
    m.seed.set(p.seed);
  }
  const std::vector<int> output_shape = p.output_shape(), weights_shape = p.weights_shape();
  std::vector<int> output_extents(output_shape.rbegin(), output_shape.rend());
  Halide::Buffer<> output(element, output_extents);
  std::vector<Halide::Buffer<>> outputs = {output};
  Halide::Buffer<> weights;
  if (p.desc.weights != weights_output::none) {
    std::vector<int> extents(weights_shape.rbegin(), weights_shape.rend());
    weights = Halide::Buffer<>(element, extents);
    outputs.push_back(weights);
  }
  impl_->pipeline.realize(Halide::Realization(outputs), impl_->target);
  module_result r;
  r.output = decode(p.desc.element_type, output.data(), output.number_of_elements());
  if (weights.defined()) r.weights = decode(p.desc.element_type, weights.data(), weights.number_of_elements());
  return r;
}

}  // namespace attngen::testing
