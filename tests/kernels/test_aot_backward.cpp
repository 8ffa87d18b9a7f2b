// The backward pass of kernels generated ahead of time (attngen_add_kernel, descriptions with
// .with_backward()), through the runtime: for each configuration of the registry with AOT calls and a
// backward, the generated forward's output and log-sum-exp, then the generated backward's gradients
// against the float64 reference's; and the backward's argument checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "aot_backward_softcap_sinks.hpp"
#include "compiled_kernels.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_backward.hpp"
#include "support/compare.hpp"
#include "support/configuration_tests.hpp"
#include "support/dense_view.hpp"
#include "support/element_codec.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

// A backward call's storage beside a forward call's: the output's gradient and the gradients.
class aot_backward_call {
 public:
  aot_backward_call(const attention_problem& p, aot_call& forward, const std::vector<float>& d_output)
      : p_(p), forward_(forward) {
    const dtype t = p.desc.element_type;
    d_output_ = encode(t, d_output);
    dq_.assign(p.q.size() * size_of(t), 0);
    dk_.assign(p.k.size() * size_of(t), 0);
    dv_.assign(p.v.size() * size_of(t), 0);
    d_sinks_.assign(p.sinks.size(), 0.0f);
    d_captures_.resize(p.captures.size());
    for (std::size_t t = 0; t < p.captures.size(); ++t)
      if (p.desc.capture_has_gradient(int(t))) d_captures_[t].assign(p.captures[t].size(), 0.0f);
    if (p.desc.scalars_have_gradient()) d_scalars_.assign(p.scalars.size(), 0.0f);
  }

  attention_backward_args args() {
    const attention_desc& d = p_.desc;
    const dtype t = d.element_type;
    const attention_args a = forward_.args();
    const std::int64_t B = p_.batch, Lq = p_.query_length, Lk = p_.key_length, H = d.num_heads,
                       KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
    attention_backward_args b;
    b.q = a.q;
    b.k = a.k;
    b.v = a.v;
    b.sinks = a.sinks;
    b.mask = a.mask;
    b.key_padding = a.key_padding;
    std::copy(std::begin(a.captures), std::end(a.captures), std::begin(b.captures));
    std::copy(std::begin(a.scalars), std::end(a.scalars), std::begin(b.scalars));
    b.output = a.output;
    b.lse = a.lse;
    b.d_output = make_tensor(d_output_.data(), t, {B, Lq, H, Dv});
    b.dq = make_tensor(dq_.data(), t, {B, Lq, H, D});
    b.dk = make_tensor(dk_.data(), t, {B, Lk, KVH, D});
    b.dv = make_tensor(dv_.data(), t, {B, Lk, KVH, Dv});
    if (d.has_sinks) b.d_sinks = make_tensor(d_sinks_.data(), {H});
    for (std::size_t t = 0; t < d_captures_.size(); ++t)
      if (!d_captures_[t].empty()) b.d_captures[t] = dense_view(d_captures_[t].data(), dtype::f32, p_.capture_shape(int(t)));
    if (!d_scalars_.empty()) b.d_scalars = make_tensor(d_scalars_.data(), {std::int64_t(d_scalars_.size())});
    return b;
  }

  /// Sets every gradient element to `value`, so a test can tell what the call wrote.
  void fill_gradients(float value) {
    const dtype t = p_.desc.element_type;
    dq_ = encode(t, std::vector<float>(p_.q.size(), value));
    dk_ = encode(t, std::vector<float>(p_.k.size(), value));
    dv_ = encode(t, std::vector<float>(p_.v.size(), value));
    std::fill(d_sinks_.begin(), d_sinks_.end(), value);
    std::fill(d_scalars_.begin(), d_scalars_.end(), value);
    for (auto& gradient : d_captures_) std::fill(gradient.begin(), gradient.end(), value);
  }

  std::vector<float> dq() const { return decode(p_.desc.element_type, dq_.data(), p_.q.size()); }
  std::vector<float> dk() const { return decode(p_.desc.element_type, dk_.data(), p_.k.size()); }
  std::vector<float> dv() const { return decode(p_.desc.element_type, dv_.data(), p_.v.size()); }
  const std::vector<float>& d_sinks() const { return d_sinks_; }
  kernel_gradients gradients() const { return {dq(), dk(), dv(), d_sinks_, d_captures_, d_scalars_}; }
  const std::vector<float>& d_scalars() const { return d_scalars_; }

 private:
  const attention_problem& p_;
  aot_call& forward_;
  std::vector<std::uint8_t> d_output_, dq_, dk_, dv_;
  std::vector<float> d_sinks_, d_scalars_;
  std::vector<std::vector<float>> d_captures_;
};

void check_aot_backward(const compiled_kernel& kernel, const attention_desc& desc, const shape& s) {
  const attention_problem p = make_random_problem(desc, s.batch, s.query_length, s.key_length, 99);
  aot_call forward(p);
  REQUIRE(kernel.run_operator(forward.args()).ok());
  const std::vector<float> d_output = make_random_output_gradient(p, 100);
  aot_backward_call backward(p, forward, d_output);
  const status result = kernel.run_backward(backward.args());
  INFO(p.name() << ": " << result.message());
  REQUIRE(result.ok());
  const reference_gradients expected = reference_attention_backward(p, d_output);
  for (const std::string& failure : gradient_failures(p, expected, backward.gradients())) CHECK(failure == "");
}

const compiled_kernel& backward_kernel() {
  for (const compiled_kernel& kernel : compiled_kernels)
    if (kernel.run_backward != nullptr) return kernel;
  FAIL("tests/CMakeLists.txt generates no AOT kernel with a backward pass");
  throw;
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    if (!c.aot.empty() && c.desc.backward)
      register_test_case(title(c) + ": the AOT kernel's backward matches the float64 gradients at " + sizes_text(c.aot),
                         "[aot][backward]" + std::string(c.tags), [&c] {
                           const compiled_kernel* kernel = find_kernel(compiled_kernels, c.name);
                           INFO("tests/CMakeLists.txt generates no kernel aot_" << c.name);
                           REQUIRE(kernel != nullptr);
                           REQUIRE(kernel->run_backward != nullptr);
                           for (const shape& s : c.aot) check_aot_backward(*kernel, c.desc, s);
                         });
  return true;
}();

}  // namespace

TEST_CASE("AOT backward refuses a dk of the wrong shape, naming it, and writes nothing", "[aot][backward]") {
  const compiled_kernel& kernel = backward_kernel();
  const attention_desc& desc = operator_configuration_named(kernel.configuration)->desc;
  const attention_problem p = make_random_problem(desc, 1, 5, 9, 3);
  aot_call forward(p);
  REQUIRE(kernel.run_operator(forward.args()).ok());
  aot_backward_call backward(p, forward, make_random_output_gradient(p, 4));
  backward.fill_gradients(7.0f);
  attention_backward_args args = backward.args();
  args.dk.shape[1] = 8;
  const status s = kernel.run_backward(args);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), Catch::Matchers::StartsWith("dk:"));
  const std::vector<float> dq = backward.dq();
  CHECK(std::all_of(dq.begin(), dq.end(), [](float x) { return x == 7.0f; }));
}

TEST_CASE("AOT backward with no queries writes zero key and value gradients", "[aot][backward]") {
  const compiled_kernel& kernel = backward_kernel();
  const attention_desc& desc = operator_configuration_named(kernel.configuration)->desc;
  const attention_problem p = make_random_problem(desc, 2, 0, 9, 3);
  aot_call forward(p);
  aot_backward_call backward(p, forward, make_random_output_gradient(p, 4));
  backward.fill_gradients(7.0f);
  REQUIRE(kernel.run_backward(backward.args()).ok());
  const std::vector<float> dk = backward.dk(), dv = backward.dv();
  CHECK(std::all_of(dk.begin(), dk.end(), [](float x) { return x == 0.0f; }));
  CHECK(std::all_of(dv.begin(), dv.end(), [](float x) { return x == 0.0f; }));
}

TEST_CASE("AOT backward's typed call writes the same gradients as its args call", "[aot][backward]") {
  const attention_desc& desc = aot_backward_softcap_sinks::description;
  const attention_problem p = make_random_problem(desc, 2, 17, 23, 5);
  aot_call forward(p);
  REQUIRE(aot_backward_softcap_sinks::run(forward.args()).ok());
  const std::vector<float> d_output = make_random_output_gradient(p, 6);
  aot_backward_call by_args(p, forward, d_output), typed(p, forward, d_output);
  REQUIRE(aot_backward_softcap_sinks::backward(by_args.args()).ok());
  const attention_backward_args a = typed.args();
  REQUIRE(aot_backward_softcap_sinks::backward(a.q, a.k, a.v, a.sinks, a.key_padding, a.scalars[0], a.output, a.lse,
                                               a.d_output, a.dq, a.dk, a.dv, a.d_sinks, a.d_scalars)
              .ok());
  CHECK(typed.dq() == by_args.dq());
  CHECK(typed.dk() == by_args.dk());
  CHECK(typed.dv() == by_args.dv());
  CHECK(typed.d_sinks() == by_args.d_sinks());
  CHECK(typed.d_scalars() == by_args.d_scalars());
}

TEST_CASE("AOT backward writes the same bits with 1, 2 and 8 threads", "[aot][backward]") {
  const attention_desc& desc = aot_backward_softcap_sinks::description;
  const attention_problem p = make_random_problem(desc, 2, 70, 90, 8);
  aot_call forward(p);
  REQUIRE(aot_backward_softcap_sinks::run(forward.args()).ok());
  const std::vector<float> d_output = make_random_output_gradient(p, 9);
  std::vector<std::vector<float>> gradients;
  for (int threads : {1, 2, 8}) {
    set_num_threads(threads);
    aot_backward_call call(p, forward, d_output);
    REQUIRE(aot_backward_softcap_sinks::backward(call.args()).ok());
    std::vector<float> all = call.dq();
    for (const auto& part : {call.dk(), call.dv(), call.d_sinks(), call.d_scalars()})
      all.insert(all.end(), part.begin(), part.end());
    gradients.push_back(all);
  }
  set_num_threads(0);
  CHECK(gradients[1] == gradients[0]);
  CHECK(gradients[2] == gradients[0]);
}
