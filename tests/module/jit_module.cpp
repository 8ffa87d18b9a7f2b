#include "module/jit_module.hpp"

#include <cstring>
#include <map>
#include <stdexcept>

#include "Halide.h"
#include "attngen/codegen/module_algorithm.hpp"
#include "attngen/codegen/schedule_module.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/variants.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

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

// One part of the module, compiled.
struct jit_part {
  codegen::module_algorithm algorithm;
  Halide::Pipeline pipeline;
};

struct jit_module::impl {
  Halide::Target target;
  std::map<codegen::module_part, jit_part> parts;
};

jit_module::jit_module(const mha_desc& desc, kernel_variant variant) : impl_(std::make_unique<impl>()) {
  impl_->target = codegen::running_cpu_target();
  const codegen::blocking tiles = codegen::cpu_module_variant_blocking(desc, impl_->target, variant);
  for (const codegen::module_part part : codegen::cpu_module_parts(desc)) {
    jit_part& p = impl_->parts[part];
    p.algorithm = codegen::define_module(desc, tiles, /*bfloat16_as_bits=*/false, part);
    codegen::schedule_module_cpu(p.algorithm, impl_->target);
    p.pipeline = Halide::Pipeline(p.algorithm.outputs());
    p.pipeline.compile_jit(impl_->target);
  }
}

jit_module::~jit_module() = default;

module_result jit_module::run(const module_problem& p) {
  // The parts run one after the other as the runtime runs them, over float buffers made here.
  const mha_desc& d = p.desc;
  const Halide::Type element = codegen::halide_type_of(d.element_type);
  auto input = [&](const std::string& name, Halide::Type type) {
    const auto found = p.inputs.find(name);
    if (found == p.inputs.end()) throw std::logic_error("problem lacks " + name);
    return to_buffer(type, found->second);
  };
  // A (B, L, F) or (L, B, F) sequence as Halide's (F, L, B).
  auto batch_major = [&](Halide::Buffer<> sequence) { return d.batch_major ? sequence : sequence.transposed(1, 2); };
  auto& parts = impl_->parts;
  auto run_linear = [&](codegen::module_part part, const Halide::Buffer<>& x, const std::string& weight, Halide::Buffer<> y) {
    codegen::module_algorithm& linear = parts.at(part).algorithm;
    linear.linear_input.set(x);
    linear.linear_weight.set(input(weight + "weight", element));
    if (linear.linear_bias.defined()) linear.linear_bias.set(input(weight + "bias", element));
    parts.at(part).pipeline.realize(Halide::Realization({y}), impl_->target);
  };

  const int extra = d.extra_keys(), keys = p.key_length + extra;
  const int kv_heads = d.effective_kv_heads(), head_dim = d.head_dim(), kv_embed = d.kv_embed();
  Halide::Buffer<float> projected_q(d.embed, p.query_length, p.batch);
  Halide::Buffer<float> projected_k(head_dim, kv_heads, keys, p.batch), projected_v(head_dim, kv_heads, keys, p.batch);
  Halide::Buffer<float> attention(head_dim, d.num_heads, p.query_length, p.batch);
  // Keys and values: `extra` appended rows, bias_k / bias_v first (when given), then zeros; then
  // the projected rows.
  auto appended_then_projected = [&](Halide::Buffer<float>& buffer, const char* bias) {
    const auto found = p.inputs.find(bias);
    for (int b = 0; b < p.batch; ++b)
      for (int row = 0; row < extra; ++row)
        for (int c = 0; c < kv_embed; ++c)
          buffer(c % head_dim, c / head_dim, row, b) = row == 0 && found != p.inputs.end() ? found->second.values[c] : 0.0f;
    const halide_dimension_t rows[] = {{0, kv_embed, 1}, {0, p.key_length, kv_embed}, {0, p.batch, keys * kv_embed}};
    return Halide::Buffer<float>(buffer.data() + extra * kv_embed, 3, rows);
  };
  const Halide::Buffer<> query = batch_major(input("query", element));
  run_linear(codegen::module_part::projection, query, "q_", projected_q);
  const Halide::Buffer<float> keys_projected = appended_then_projected(projected_k, "bias_k");
  const Halide::Buffer<float> values_projected = appended_then_projected(projected_v, "bias_v");
  if (p.key_length > 0) {
    run_linear(codegen::module_part::projection, d.self_attn ? query : batch_major(input("key", element)), "k_",
               keys_projected);
    run_linear(codegen::module_part::projection, d.self_attn ? query : batch_major(input("value", element)), "v_",
               values_projected);
  }

  auto set_masks = [&](codegen::module_algorithm& a) {
    if (a.key_padding.defined()) a.key_padding.set(input("key_padding", a.key_padding.type()));
    if (a.mask.defined()) a.mask.set(input("attn_mask", a.mask.type()));
    if (d.has_dropout()) {
      a.training.set(p.training);
      a.seed.set(p.seed);
    }
  };
  auto& attend = parts.at(codegen::module_part::attention).algorithm;
  attend.projected_q_input.set(projected_q);
  attend.keys_input.set(projected_k);
  attend.values_input.set(projected_v);
  set_masks(attend);
  parts.at(codegen::module_part::attention).pipeline.realize(Halide::Realization({attention}), impl_->target);

  const std::vector<int> output_shape = p.output_shape();
  Halide::Buffer<> output(element, std::vector<int>(output_shape.rbegin(), output_shape.rend()));
  const halide_dimension_t attention_rows[] = {{0, d.embed, 1}, {0, p.query_length, d.embed},
                                               {0, p.batch, p.query_length * d.embed}};
  run_linear(d.element_type == dtype::f32 ? codegen::module_part::projection : codegen::module_part::out_projection,
             Halide::Buffer<float>(attention.data(), 3, attention_rows), "out_", batch_major(output));

  module_result r;
  r.output = decode(d.element_type, output.data(), output.number_of_elements());
  if (d.weights == weights_output::none) return r;
  auto& weigh = parts.at(codegen::module_part::weights).algorithm;
  weigh.projected_q_input.set(projected_q);
  weigh.keys_input.set(projected_k);
  set_masks(weigh);
  const std::vector<int> weights_shape = p.weights_shape();
  Halide::Buffer<> weights(element, std::vector<int>(weights_shape.rbegin(), weights_shape.rend()));
  parts.at(codegen::module_part::weights).pipeline.realize(Halide::Realization({weights}), impl_->target);
  r.weights = decode(d.element_type, weights.data(), weights.number_of_elements());
  return r;
}

}  // namespace attngen::testing
