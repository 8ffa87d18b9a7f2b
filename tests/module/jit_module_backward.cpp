#include "module/jit_module_backward.hpp"

#include <stdexcept>

#include "Halide.h"
#include "attngen/codegen/module_backward.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/codegen/variants.hpp"
#include "module/jit_module.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

struct jit_module_backward::impl {
  Halide::Target target;
  codegen::module_backward_algorithm algorithm;
  Halide::Pipeline pipeline;
};

jit_module_backward::jit_module_backward(const mha_desc& desc) : impl_(std::make_unique<impl>()) {
  impl_->target = codegen::running_cpu_target();
  const codegen::blocking tiles = codegen::cpu_module_variant_blocking(desc, impl_->target, kernel_variant::general);
  impl_->algorithm = codegen::define_module_backward(desc, tiles, codegen::cpu_backward_blocking(/*one_pass=*/true));
  codegen::schedule_module_backward_cpu(impl_->algorithm, impl_->target);
  impl_->pipeline = Halide::Pipeline(impl_->algorithm.outputs());
  impl_->pipeline.compile_jit(impl_->target);
}

jit_module_backward::~jit_module_backward() = default;

module_kernel_gradients jit_module_backward::run(const module_problem& p) {
  codegen::module_algorithm& m = impl_->algorithm.forward;
  const mha_desc& d = p.desc;
  // The problem names masks by their tensors' short names.
  auto problem_name = [](const module_argument& a) {
    if (a.slot == module_slot::key_padding_mask) return std::string("key_padding");
    return std::string(parameter_name(a));
  };
  auto param_of = [&](module_slot slot) -> Halide::ImageParam& {
    switch (slot) {
      case module_slot::query: return m.query;
      case module_slot::key: return m.key;
      case module_slot::value: return m.value;
      case module_slot::q_weight: return m.q_weight;
      case module_slot::k_weight: return m.k_weight;
      case module_slot::v_weight: return m.v_weight;
      case module_slot::q_bias: return m.q_bias;
      case module_slot::k_bias: return m.k_bias;
      case module_slot::v_bias: return m.v_bias;
      case module_slot::bias_k: return m.bias_k;
      case module_slot::bias_v: return m.bias_v;
      case module_slot::out_weight: return m.out_weight;
      case module_slot::out_bias: return m.out_bias;
      case module_slot::key_padding_mask: return m.key_padding;
      case module_slot::attn_mask: return m.mask;
      case module_slot::d_output: return m.d_output;
      default: throw std::logic_error("not an input of the module's backward");
    }
  };
  const module_argument_table arguments = module_backward_arguments(d);
  std::vector<Halide::Buffer<>> outputs;
  std::vector<std::string> names;
  for (const module_argument& a : arguments) {
    if (!a.is_output()) {
      const auto found = p.inputs.find(problem_name(a));
      if (found == p.inputs.end()) throw std::logic_error("problem lacks " + problem_name(a));
      Halide::ImageParam& param = param_of(a.slot);
      param.set(to_buffer(param.type(), found->second));
      continue;
    }
    // A gradient: d_<input>, or d_weights.<weight>.
    const std::string name(parameter_name(a));
    const std::string of = name.rfind("d_", 0) == 0 ? name.substr(2) : name;
    const host_tensor& shaped = p.inputs.at(of);
    outputs.emplace_back(codegen::halide_type_of(d.element_type),
                         std::vector<int>(shaped.shape.rbegin(), shaped.shape.rend()));
    names.push_back("d_" + of);
  }
  if (d.has_dropout()) {
    m.training.set(p.training);
    m.seed.set(p.seed);
  }
  impl_->pipeline.realize(Halide::Realization(outputs), impl_->target);
  module_kernel_gradients gradients;
  for (std::size_t n = 0; n < outputs.size(); ++n)
    gradients[names[n]] = decode(d.element_type, outputs[n].data(), outputs[n].number_of_elements());
  return gradients;
}

}  // namespace attngen::testing
