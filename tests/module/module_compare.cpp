#include "module/module_compare.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "support/tolerance.hpp"

namespace attngen::testing {

double scaled_error(const std::vector<float>& kernel, const std::vector<double>& reference, std::string& where) {
  REQUIRE(kernel.size() == reference.size());
  double largest = 1.0, worst = 0.0;
  for (double r : reference) {
    REQUIRE(std::isfinite(r));
    largest = std::max(largest, std::fabs(r));
  }
  for (std::size_t n = 0; n < kernel.size(); ++n) {
    const double error = std::fabs(double(kernel[n]) - reference[n]);
    if (!(error <= worst)) {
      worst = error;
      std::ostringstream s;
      s << "element " << n << ": kernel " << kernel[n] << ", reference " << reference[n];
      where = s.str();
    }
  }
  return worst / largest;
}

double module_tolerance_for(const module_problem& p) {
  const mha_desc& d = p.desc;
  return module_tolerance(d.element_type, std::max({d.embed, d.effective_kdim(), d.effective_vdim()}), d.head_dim(),
                          p.key_length + d.extra_keys(), d.embed);
}

double module_gradient_tolerance_for(const module_problem& p) {
  const mha_desc& d = p.desc;
  const int keys = p.key_length + d.extra_keys();
  const int rows = p.batch * std::max(p.query_length, keys);
  return gradient_tolerance(d.element_type, std::max({d.embed, d.effective_kdim(), d.effective_vdim()}), d.head_dim(),
                            keys, rows);
}

}  // namespace attngen::testing
