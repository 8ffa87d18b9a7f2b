// The runtime sees the schema's list: for every description kind, one view per argument the schema
// lists, shaped as its dimensions say, passes through the typed call's mapping into the call's
// arguments and through the runtime's validation.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attngen/module_arguments.hpp"
#include "attngen/runtime.hpp"
#include "support/description_kinds.hpp"
#include "support/module_description_kinds.hpp"

using namespace attngen;

namespace {

// The run-time extents the views take: B, Lq and Lk (a module's S).
constexpr std::int64_t run_time_extents[] = {2, 3, 5};

// Dense views over zeroed memory held here, one per argument, shaped by the schema.
class schema_views {
 public:
  template <typename Argument>
  tensor_view add(const Argument& a) {
    tensor_view view;
    view.type = a.type;
    view.rank = a.rank;
    std::int64_t elements = 1;
    for (int d = a.rank - 1; d >= 0; --d) {
      const argument_dim& dim = a.dims[d];
      view.shape[d] = dim.source == extent_source::description
                          ? dim.extent
                          : dim.scale * run_time_extents[int(dim.source)] + dim.offset;
      view.strides[d] = elements;
      elements *= view.shape[d];
    }
    memory_.emplace_back(std::size_t(elements * size_of(a.type)));
    view.data = memory_.back().data();
    return view;
  }

 private:
  std::vector<std::vector<std::uint8_t>> memory_;
};

// The member of mha_weights a weight's schema name ("weights.q_weight") names.
tensor_view& weight_named(mha_weights& w, std::string_view name) {
  std::pair<std::string_view, tensor_view*> members[] = {
      {"q_weight", &w.q_weight}, {"k_weight", &w.k_weight}, {"v_weight", &w.v_weight}, {"q_bias", &w.q_bias},
      {"k_bias", &w.k_bias},     {"v_bias", &w.v_bias},     {"bias_k", &w.bias_k},     {"bias_v", &w.bias_v},
      {"out_weight", &w.out_weight}, {"out_bias", &w.out_bias}};
  for (auto& [member, view] : members)
    if ("weights." + std::string(member) == name) return *view;
  FAIL("no weight is called " << name);
  return w.q_weight;
}

}  // namespace

TEST_CASE("schema: every description kind's schema-shaped views pass the typed call's mapping and validation",
          "[runtime][schema]") {
  for (const auto& kind : testing::description_kinds()) {
    INFO(kind.name);
    schema_views memory;
    std::vector<tensor_view> tensors;
    for (const kernel_argument& argument : kernel_arguments(kind.desc))
      if (argument.slot != argument_slot::scalars) tensors.push_back(memory.add(argument));
    const float scalars[capture_table::max_scalars] = {};
    const attention_args args = detail::attention_args_of(kind.desc, tensors.data(), scalars, {});
    const status s = validate(kind.desc, args);
    INFO(s.message());
    CHECK(s.ok());
  }
}

TEST_CASE("module schema: every module kind's schema-shaped views pass the typed call's mapping and validation",
          "[runtime][schema]") {
  for (const auto& kind : testing::module_description_kinds()) {
    INFO(kind.name);
    schema_views memory;
    std::vector<tensor_view> tensors;
    mha_weights weights;
    for (const module_argument& argument : kernel_arguments(kind.desc)) {
      if (!is_weight(argument)) tensors.push_back(memory.add(argument));
      else weight_named(weights, argument.name) = memory.add(argument);
    }
    const mha_args args = detail::mha_args_of(kind.desc, tensors.data(), weights, false, 0, {});
    const status s = validate(kind.desc, args);
    INFO(s.message());
    CHECK(s.ok());
  }
}
