#include "support/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "support/tolerance.hpp"

namespace attngen::testing {

namespace {

bool same_special(double expected, double actual) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return expected == actual;
  return true;
}

}  // namespace

comparison compare_with_reference(const attention_problem& p, const reference_result& expected,
                                  const std::vector<float>& output, const std::vector<float>& lse, int merges,
                                  computed_by by) {
  comparison c;
  const auto& d = p.desc;
  c.output_tolerance = output_tolerance_of(d, p.key_length, merges, by);
  auto fail = [&](const char* what, std::size_t index, double want, double got, double tol) {
    if (!c.ok) return;
    c.ok = false;
    std::ostringstream s;
    s << p.name() << ": " << what << "[" << index << "] expected " << want << ", got " << got
      << " (tolerance " << tol << ")";
    c.first_failure = s.str();
  };
  if (output.size() != expected.output.size()) {
    c.ok = false;
    c.first_failure = p.name() + ": output has the wrong size";
    return c;
  }
  for (std::size_t n = 0; n < output.size(); ++n) {
    const double want = expected.output[n], got = output[n];
    if (!same_special(want, got)) {
      fail("output", n, want, got, c.output_tolerance);
      continue;
    }
    if (std::isnan(want)) continue;
    const double error = std::fabs(want - got);
    c.max_output_error = std::max(c.max_output_error, error);
    if (error > c.output_tolerance) fail("output", n, want, got, c.output_tolerance);
  }
  if (d.lse_output) {
    for (std::size_t n = 0; n < lse.size(); ++n) {
      const double want = expected.lse[n], got = lse[n];
      const double tol = lse_tolerance_of(d, p.key_length, std::isfinite(want) ? want : 0.0, merges, by);
      if (!same_special(want, got)) fail("lse", n, want, got, tol);
      else if (std::isfinite(want) && std::fabs(want - got) > tol) fail("lse", n, want, got, tol);
    }
  }
  return c;
}

comparison compare_sequences_with_reference(const sequence_batch& batch, computed_by by) {
  comparison all;
  for (std::size_t b = 0; b < batch.sequences.size() && all.ok; ++b) {
    const attention_problem& p = batch.sequences[b];
    const comparison c =
        compare_with_reference(p, reference_attention(p), batch.output_of(int(b)), batch.lse_of(int(b)), 0, by);
    all.max_output_error = std::max(all.max_output_error, c.max_output_error);
    all.output_tolerance = std::max(all.output_tolerance, c.output_tolerance);
    if (!c.ok) {
      all.ok = false;
      all.first_failure = "sequence " + std::to_string(b) + ": " + c.first_failure;
    }
  }
  return all;
}

comparison compare_sequences_with_unquantised(const sequence_batch& batch) {
  comparison all;
  const attention_desc& d = batch.desc;
  const double scale = d.has_scale ? d.scale_value : 1.0 / std::sqrt(double(d.qk_head_dim));
  all.output_tolerance = int8_quantisation_bound(d.qk_head_dim, scale);
  for (std::size_t b = 0; b < batch.unquantised.size() && all.ok; ++b) {
    const reference_result expected = reference_attention(batch.unquantised[b]);
    const std::vector<float> output = batch.output_of(int(b));
    for (std::size_t n = 0; n < output.size(); ++n) {
      const double error = std::fabs(expected.output[n] - output[n]);
      all.max_output_error = std::max(all.max_output_error, error);
      if (!(error <= all.output_tolerance)) {
        all.ok = false;
        std::ostringstream s;
        s << "sequence " << b << " (" << batch.unquantised[b].name() << "): output[" << n << "] expected "
          << expected.output[n] << " before quantisation, got " << output[n] << " (bound " << all.output_tolerance << ")";
        all.first_failure = s.str();
        break;
      }
    }
  }
  return all;
}

namespace {

// Where `got` is first beyond tolerance x max(1, max |expected|) of `expected`; empty if nowhere.
std::string first_gradient_failure(const char* name, const std::vector<double>& expected, const std::vector<float>& got,
                                   double tolerance) {
  double largest = 1.0;
  for (double x : expected) largest = std::max(largest, std::abs(x));
  if (got.size() != expected.size()) return std::string(name) + ": " + std::to_string(got.size()) + " values, expected " +
                                            std::to_string(expected.size());
  for (std::size_t n = 0; n < expected.size(); ++n)
    if (!(std::abs(expected[n] - double(got[n])) <= tolerance * largest)) {
      std::ostringstream s;
      s << name << "[" << n << "] expected " << expected[n] << ", got " << got[n] << " (tolerance "
        << tolerance * largest << ")";
      return s.str();
    }
  return {};
}

}  // namespace

std::vector<std::string> gradient_failures(const attention_problem& p, const reference_gradients& expected,
                                           const kernel_gradients& got) {
  const attention_desc& d = p.desc;
  const int D = d.qk_head_dim, Dv = d.effective_v_head_dim(), Lk = p.key_length;
  const int group_rows = p.query_length * d.group_size();
  // A captured element may be read by every score.
  const int scores = p.batch * d.num_heads * p.query_length * Lk;
  const dtype t = d.element_type;
  std::vector<std::string> failures{
      first_gradient_failure("dq", expected.dq, got.dq, gradient_tolerance(t, D, Dv, Lk, Lk)),
      first_gradient_failure("dk", expected.dk, got.dk, gradient_tolerance(t, D, Dv, Lk, group_rows)),
      first_gradient_failure("dv", expected.dv, got.dv, gradient_tolerance(t, D, Dv, Lk, group_rows))};
  if (d.has_sinks)
    failures.push_back(first_gradient_failure("d_sinks", expected.d_sinks, got.d_sinks,
                                              gradient_tolerance(dtype::f32, D, Dv, Lk, p.query_length * p.batch)));
  for (int c = 0; c < d.captures.tensor_count; ++c)
    if (d.capture_has_gradient(c))
      failures.push_back(first_gradient_failure("d_captures", expected.d_captures[std::size_t(c)],
                                                got.d_captures[std::size_t(c)],
                                                gradient_tolerance(dtype::f32, D, Dv, Lk, scores)));
  if (d.scalars_have_gradient())
    failures.push_back(first_gradient_failure("d_scalars", expected.d_scalars, got.d_scalars,
                                              gradient_tolerance(dtype::f32, D, Dv, Lk, scores)));
  return failures;
}

}  // namespace attngen::testing
