#include "module/module_backward_check.hpp"

#include <catch2/catch.hpp>

#include "module/module_compare.hpp"

namespace attngen::testing {

std::vector<module_problem> make_module_backward_problems(const mha_desc& desc, const std::vector<shape>& shapes,
                                                          std::uint32_t seed) {
  std::vector<module_problem> problems;
  for (const shape& s : shapes) {
    module_problem p = make_random_module_problem(desc, s.batch, s.query_length, s.key_length, seed++);
    p.training = desc.has_dropout();
    add_output_gradient(p, seed++);
    problems.push_back(std::move(p));
  }
  return problems;
}

void check_module_gradients(const module_problem& p, const std::map<std::string, std::vector<float>>& got,
                            const module_gradients& expected) {
  INFO(p.name());
  CHECK(got.size() == expected.size());
  for (const auto& [name, reference] : expected) {
    INFO(name);
    REQUIRE(got.count(name) == 1);
    std::string where;
    const double error = scaled_error(got.at(name), reference, where);
    INFO(where);
    CHECK(error <= module_gradient_tolerance_for(p));
  }
}

}  // namespace attngen::testing
