// The backward pass (codegen/backward.hpp) of each configuration of the registry with backward sizes,
// compiled through Halide's JIT with its CPU schedule: dq, dk, dv (and d_sinks) against the float64
// reference's gradients, from the forward's output and log-sum-exp (the reference's, rounded to the
// element type and float32 as a forward kernel writes them) and a random output gradient.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "Halide.h"
#include "attngen/codegen/backward.hpp"
#include "attngen/codegen/targets.hpp"
#include "codegen/jit_inputs.hpp"
#include "reference/reference_attention.hpp"
#include "reference/reference_backward.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

class jit_backward_kernel {
 public:
  jit_backward_kernel(const attention_desc& desc, bool one_pass)
      : algorithm_(codegen::define_attention_backward(desc, codegen::cpu_backward_blocking(one_pass))) {
    const Halide::Target target = codegen::running_cpu_target();
    codegen::schedule_backward_cpu(algorithm_, target);
    pipeline_ = Halide::Pipeline(algorithm_.outputs());
    pipeline_.compile_jit(target);
  }

  kernel_gradients run(const attention_problem& p, const reference_result& forward, const std::vector<float>& d_output) {
    auto& a = algorithm_;
    const attention_desc& d = p.desc;
    const dtype element = d.element_type;
    const int B = p.batch, Lq = p.query_length, Lk = p.key_length;
    const int H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
    a.forward.q.set(to_buffer(element, {B, Lq, H, D}, p.q));
    a.forward.k.set(to_buffer(element, {B, Lk, KVH, D}, p.k));
    a.forward.v.set(to_buffer(element, {B, Lk, KVH, Dv}, p.v));
    if (d.has_additive_mask()) a.forward.mask.set(to_buffer(element, p.mask_shape(), p.mask));
    if (d.has_key_padding_mask()) {
      Halide::Buffer<std::uint8_t> padding(Lk, B);
      std::copy(p.key_padding.begin(), p.key_padding.end(), padding.data());
      a.forward.key_padding.set(padding);
    }
    if (d.has_sinks) a.forward.sinks.set(to_buffer(dtype::f32, {H}, p.sinks));
    set_captures(a.forward.captures, p);
    a.output.set(to_buffer(element, {B, Lq, H, Dv}, {forward.output.begin(), forward.output.end()}));
    a.lse.set(to_buffer(dtype::f32, {B, H, Lq}, {forward.lse.begin(), forward.lse.end()}));
    a.d_output.set(to_buffer(element, {B, Lq, H, Dv}, d_output));
    const Halide::Type type = codegen::halide_type_of(element);
    std::vector<Halide::Buffer<>> gradients{Halide::Buffer<>(type, {D, H, Lq, B}), Halide::Buffer<>(type, {D, KVH, Lk, B}),
                                            Halide::Buffer<>(type, {Dv, KVH, Lk, B})};
    if (d.has_sinks) gradients.push_back(Halide::Buffer<>(Halide::Float(32), {H}));
    for (int t = 0; t < d.captures.tensor_count; ++t)
      if (d.capture_has_gradient(t)) {
        const std::vector<int> shape = p.capture_shape(t);
        gradients.push_back(Halide::Buffer<>(Halide::Float(32), std::vector<int>(shape.rbegin(), shape.rend())));
      }
    if (d.scalars_have_gradient()) gradients.push_back(Halide::Buffer<>(Halide::Float(32), {d.captures.scalar_count}));
    pipeline_.realize(Halide::Realization(gradients));
    kernel_gradients g{as_floats(gradients[0]), as_floats(gradients[1]), as_floats(gradients[2]), {}, {}, {}};
    std::size_t next = 3;
    if (d.has_sinks) g.d_sinks = as_floats(gradients[next++]);
    g.d_captures.resize(std::size_t(d.captures.tensor_count));
    for (int t = 0; t < d.captures.tensor_count; ++t)
      if (d.capture_has_gradient(t)) g.d_captures[std::size_t(t)] = as_floats(gradients[next++]);
    if (d.scalars_have_gradient()) g.d_scalars = as_floats(gradients[next++]);
    return g;
  }

 private:
  static std::vector<float> as_floats(const Halide::Buffer<>& buffer) {
    std::vector<float> values(buffer.number_of_elements());
    if (buffer.type() == Halide::Float(32)) {
      std::copy_n(static_cast<const float*>(buffer.data()), values.size(), values.begin());
    } else {
      for (std::size_t n = 0; n < values.size(); ++n) {
        if (buffer.type() == Halide::BFloat(16)) values[n] = float(static_cast<const Halide::bfloat16_t*>(buffer.data())[n]);
        else values[n] = float(static_cast<const Halide::float16_t*>(buffer.data())[n]);
      }
    }
    return values;
  }

  codegen::backward_algorithm algorithm_;
  Halide::Pipeline pipeline_;
};

// A forward result as a kernel writes it: the output rounded to the element type, the lse to float32.
reference_result as_written(const attention_problem& p, reference_result r) {
  for (double& x : r.output) x = round_to(p.desc.element_type, float(x));
  for (double& x : r.lse) x = float(x);
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The CPU schedule's one pass against the reference, and with `in_two_passes` its two passes (the
// runtime's choice when threads outnumber the one pass's tasks) against the one pass, bit for bit: the
// bits must not depend on the number of threads.
void check_backward(const attention_desc& desc, const short_list<shape, 3>& shapes, bool in_two_passes) {
  jit_backward_kernel one_pass(desc, true);
  std::optional<jit_backward_kernel> two_passes;
  if (in_two_passes) two_passes.emplace(desc, false);
  std::uint32_t seed = 11;
  for (const shape& s : shapes) {
    const attention_problem p = make_random_problem(desc, s.batch, s.query_length, s.key_length, seed++);
    const reference_result forward = as_written(p, reference_attention(p));
    const std::vector<float> d_output = make_random_output_gradient(p, seed);
    const reference_gradients expected = reference_attention_backward(p, d_output);
    const kernel_gradients got = one_pass.run(p, forward, d_output);
    INFO(p.name());
    for (const std::string& failure : gradient_failures(p, expected, got)) CHECK(failure == "");
    if (!two_passes) continue;
    const kernel_gradients got_in_two = two_passes->run(p, forward, d_output);
    CHECK(same_bits(got_in_two.dq, got.dq));
    CHECK(same_bits(got_in_two.dk, got.dk));
    CHECK(same_bits(got_in_two.dv, got.dv));
    CHECK(same_bits(got_in_two.d_sinks, got.d_sinks));
    CHECK(got_in_two.d_captures.size() == got.d_captures.size());
    for (std::size_t t = 0; t < std::min(got.d_captures.size(), got_in_two.d_captures.size()); ++t)
      CHECK(same_bits(got_in_two.d_captures[t], got.d_captures[t]));
    CHECK(same_bits(got_in_two.d_scalars, got.d_scalars));
  }
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    if (!c.backward.empty())
      register_test_case(title(c) + ": the backward's dq, dk and dv match float64 at " + sizes_text(c.backward) +
                             (c.backward_in_two_passes ? ", in one pass and in two alike to the bit" : ", in one pass"),
                         "[codegen][backward]" + std::string(c.tags),
                         [&c] { check_backward(c.desc, c.backward, c.backward_in_two_passes); });
  return true;
}();

}  // namespace
