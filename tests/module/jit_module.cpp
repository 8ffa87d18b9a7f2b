#include "module/jit_module.hpp"

#include <cstring>
#include <stdexcept>

#include "Halide.h"
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

// One part of the module, compiled.
struct jit_part {
  codegen::module_algorithm algorithm;
  Halide::Pipeline pipeline;
};

struct jit_module::impl {
  Halide::Target target;
  std::vector<jit_part> parts;  // in codegen::cpu_module_parts order
};

jit_module::jit_module(const mha_desc& desc, kernel_variant variant) : impl_(std::make_unique<impl>()) {
  impl_->target = codegen::running_cpu_target();
  const codegen::blocking tiles = codegen::cpu_variant_blocking(desc.attention_operator(), impl_->target, variant);
  for (const codegen::module_part part : codegen::cpu_module_parts(desc)) {
    jit_part& p = impl_->parts.emplace_back();
    p.algorithm = codegen::define_module(desc, tiles, /*bfloat16_as_bits=*/false, part);
    codegen::schedule_module_cpu(p.algorithm, impl_->target);
    p.pipeline = Halide::Pipeline(p.algorithm.outputs());
    p.pipeline.compile_jit(impl_->target);
  }
}

jit_module::~jit_module() = default;

module_result jit_module::run(const module_problem& p) {
  // The parts run one after the other as the runtime runs them, over float buffers made here.
  auto& parts = impl_->parts;
  auto& in = parts[0].algorithm;
  const Halide::Type element = codegen::halide_type_of(p.desc.element_type);
  const std::pair<const char*, Halide::ImageParam*> params[] = {
      {"query", &in.query},       {"key", &in.key},           {"value", &in.value},   {"q_weight", &in.q_weight},
      {"k_weight", &in.k_weight}, {"v_weight", &in.v_weight}, {"q_bias", &in.q_bias}, {"k_bias", &in.k_bias},
      {"v_bias", &in.v_bias},     {"bias_k", &in.bias_k},     {"bias_v", &in.bias_v}, {"out_weight", &parts[2].algorithm.out_weight},
      {"out_bias", &parts[2].algorithm.out_bias}, {"key_padding", &parts[1].algorithm.key_padding},
      {"attn_mask", &parts[1].algorithm.mask}};
  for (const auto& [name, param] : params) {
    const auto found = p.inputs.find(name);
    if (!param->defined()) {
      if (found != p.inputs.end()) throw std::logic_error(std::string("problem has ") + name + ", kernel does not");
      continue;
    }
    if (found == p.inputs.end()) throw std::logic_error(std::string("problem lacks ") + name);
    param->set(to_buffer(param->type(), found->second));
  }
  const mha_desc& d = p.desc;
  const int keys = p.key_length + d.extra_keys(), kv_heads = d.effective_kv_heads(), head_dim = d.head_dim();
  Halide::Buffer<float> projected_q(d.embed, p.query_length, p.batch);
  Halide::Buffer<float> projected_k(head_dim, kv_heads, keys, p.batch), projected_v(head_dim, kv_heads, keys, p.batch);
  Halide::Buffer<float> attention(head_dim, d.num_heads, p.query_length, p.batch);
  parts[0].pipeline.realize(Halide::Realization({projected_q, projected_k, projected_v}), impl_->target);

  auto& attend = parts[1].algorithm;
  attend.projected_q_input.set(projected_q);
  attend.keys_input.set(projected_k);
  attend.values_input.set(projected_v);
  if (d.has_dropout()) {
    attend.training.set(p.training);
    attend.seed.set(p.seed);
  }
  parts[1].pipeline.realize(Halide::Realization({attention}), impl_->target);

  const std::vector<int> output_shape = p.output_shape();
  Halide::Buffer<> output(element, std::vector<int>(output_shape.rbegin(), output_shape.rend()));
  parts[2].algorithm.attention_input.set(attention);
  parts[2].pipeline.realize(Halide::Realization({output}), impl_->target);

  module_result r;
  r.output = decode(d.element_type, output.data(), output.number_of_elements());
  if (d.weights == weights_output::none) return r;
  auto& weigh = parts[3].algorithm;
  weigh.projected_q_input.set(projected_q);
  weigh.keys_input.set(projected_k);
  if (weigh.key_padding.defined()) weigh.key_padding.set(attend.key_padding.get());
  if (weigh.mask.defined()) weigh.mask.set(attend.mask.get());
  if (d.has_dropout()) {
    weigh.training.set(p.training);
    weigh.seed.set(p.seed);
  }
  const std::vector<int> weights_shape = p.weights_shape();
  Halide::Buffer<> weights(element, std::vector<int>(weights_shape.rbegin(), weights_shape.rend()));
  parts[3].pipeline.realize(Halide::Realization({weights}), impl_->target);
  r.weights = decode(d.element_type, weights.data(), weights.number_of_elements());
  return r;
}

}  // namespace attngen::testing
