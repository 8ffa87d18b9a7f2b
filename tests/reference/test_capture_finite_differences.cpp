// The float64 reference's gradients of captured float tensors and scalars (what the backward kernels
// are checked against) against central finite differences of the float64 forward, whose score
// modifier the float64 interpreter of the modifier graph evaluates: for each configuration of the
// registry whose score modifier reads a captured float tensor or scalar, at a small size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "reference/reference_attention.hpp"
#include "reference/reference_backward.hpp"
#include "support/configuration_tests.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

// The step: a power of two, so that x + h and x - h of a value in [-1, 1) are exact in float and
// the difference quotient's denominator is exactly 2h.
constexpr float step = 1.0f / 1024.0f;
// Central differences err by h^2 / 6 times the third derivative: 1e-4 of the largest gradient (at
// least 1) leaves room for that.
constexpr double agreement = 1e-4;

// The loss whose gradient the backward computes: sum over the output of d_output x output.
double loss(const attention_problem& p, const std::vector<float>& d_output) {
  const reference_result r = reference_attention(p);
  double sum = 0.0;
  for (std::size_t n = 0; n < r.output.size(); ++n) sum += double(d_output[n]) * r.output[n];
  return sum;
}

// The central difference of the loss along `value` (an element of `p`), which it restores.
double central_difference(attention_problem& p, float& value, const std::vector<float>& d_output) {
  const float original = value;
  value = original + step;
  const double above = loss(p, d_output);
  value = original - step;
  const double below = loss(p, d_output);
  value = original;
  return (above - below) / (2.0 * double(step));
}

void check_finite_differences(const attention_desc& desc) {
  attention_problem p = make_random_problem(desc, 1, 9, 13, 17);
  const std::vector<float> d_output = make_random_output_gradient(p, 18);
  const reference_gradients gradients = reference_attention_backward(p, d_output);
  auto compare = [&](const char* what, std::vector<float>& values, const std::vector<double>& analytic) {
    double largest = 1.0;
    for (double g : analytic) largest = std::max(largest, std::abs(g));
    for (std::size_t n = 0; n < values.size(); ++n) {
      const double numeric = central_difference(p, values[n], d_output);
      INFO(what << "[" << n << "]: reference " << analytic[n] << ", finite difference " << numeric);
      CHECK(std::abs(numeric - analytic[n]) <= agreement * largest);
    }
  };
  for (int t = 0; t < desc.captures.tensor_count; ++t)
    if (desc.capture_has_gradient(t)) compare("d_captures", p.captures[std::size_t(t)], gradients.d_captures[std::size_t(t)]);
  if (desc.scalars_have_gradient()) compare("d_scalars", p.scalars, gradients.d_scalars);
}

const bool registered = [] {
  for (const operator_configuration& c : operator_configurations) {
    bool has_capture_gradient = c.desc.scalars_have_gradient();
    for (int t = 0; t < c.desc.captures.tensor_count; ++t) has_capture_gradient |= c.desc.capture_has_gradient(t);
    if (!c.backward.empty() && has_capture_gradient)
      register_test_case(title(c) +
                             ": the float64 reference's captured gradients match finite differences of its forward",
                         "[reference][backward]" + std::string(c.tags), [&c] { check_finite_differences(c.desc); });
  }
  return true;
}();

}  // namespace
