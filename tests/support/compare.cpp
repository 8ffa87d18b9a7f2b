#include "support/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

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
                                  const std::vector<float>& output, const std::vector<float>& lse) {
  comparison c;
  const auto& d = p.desc;
  c.output_tolerance = output_tolerance(d.element_type, d.qk_head_dim, p.key_length);
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
      const double tol = lse_tolerance(d.qk_head_dim, p.key_length, std::isfinite(want) ? want : 0.0);
      if (!same_special(want, got)) fail("lse", n, want, got, tol);
      else if (std::isfinite(want) && std::fabs(want - got) > tol) fail("lse", n, want, got, tol);
    }
  }
  return c;
}

comparison compare_sequences_with_reference(const sequence_batch& batch) {
  comparison all;
  for (std::size_t b = 0; b < batch.sequences.size() && all.ok; ++b) {
    const attention_problem& p = batch.sequences[b];
    const comparison c = compare_with_reference(p, reference_attention(p), batch.output_of(int(b)), batch.lse_of(int(b)));
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

}  // namespace attngen::testing
