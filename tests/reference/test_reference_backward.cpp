// The float64 reference backward (the backward kernels' oracle) against PyTorch's autograd in float64,
// for each configuration of the registry with backward sizes, at those sizes: the same problems and
// output gradients as the kernels' tests.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "reference/pytorch_gradients.hpp"
#include "reference/reference_backward.hpp"
#include "support/configuration_tests.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

// Both are float64: agreement to 1e-9 of the gradient's largest magnitude (at least 1).
std::string first_difference(const char* name, const std::vector<double>& ours, const std::vector<double>& pytorch) {
  double largest = 1.0;
  for (double x : pytorch) largest = std::max(largest, std::abs(x));
  for (std::size_t n = 0; n < pytorch.size(); ++n)
    if (!(std::abs(ours[n] - pytorch[n]) <= 1e-9 * largest)) {
      std::ostringstream s;
      s << name << "[" << n << "]: reference " << ours[n] << ", PyTorch " << pytorch[n];
      return s.str();
    }
  return {};
}

void check_against_pytorch(const attention_desc& desc, const short_list<shape, 3>& shapes) {
  std::vector<attention_problem> problems;
  std::vector<std::vector<float>> d_outputs;
  std::uint32_t seed = 11;
  for (const shape& s : shapes) {
    problems.push_back(make_random_problem(desc, s.batch, s.query_length, s.key_length, seed++));
    d_outputs.push_back(make_random_output_gradient(problems.back(), seed));
  }
  const std::vector<reference_gradients> pytorch = pytorch_gradients(problems, d_outputs);
  for (std::size_t n = 0; n < problems.size(); ++n) {
    const reference_gradients ours = reference_attention_backward(problems[n], d_outputs[n]);
    INFO(problems[n].name());
    CHECK(first_difference("dq", ours.dq, pytorch[n].dq) == "");
    CHECK(first_difference("dk", ours.dk, pytorch[n].dk) == "");
    CHECK(first_difference("dv", ours.dv, pytorch[n].dv) == "");
    CHECK(first_difference("d_sinks", ours.d_sinks, pytorch[n].d_sinks) == "");
    for (std::size_t t = 0; t < ours.d_captures.size(); ++t)
      CHECK(first_difference("d_captures", ours.d_captures[t], pytorch[n].d_captures[t]) == "");
    CHECK(first_difference("d_scalars", ours.d_scalars, pytorch[n].d_scalars) == "");
  }
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations)
    if (!c.backward.empty())
      register_test_case(title(c) + ": the float64 reference backward matches PyTorch's autograd at " +
                             sizes_text(c.backward),
                         "[reference][backward][pytorch]" + std::string(c.tags),
                         [&c] { check_against_pytorch(c.desc, c.backward); });
  return true;
}();

}  // namespace
