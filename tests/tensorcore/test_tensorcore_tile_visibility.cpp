// The tensor-core path's block skipping by mask modifiers: each variant's visibility_of_tile(),
// evaluated once per (block, tile of keys) on its mask's ranges, against the mask at every (row, key)
// of the tile. Tiles classified hidden are skipped by the kernel and tiles classified whole skip the
// per-key mask, so a classification that disagrees with one pair is a wrong result, and one that
// says "cut" where the mask hides the whole tile is lost speed.
#include <catch2/catch.hpp>

#include "compiled_tensorcore_variants.hpp"
#include "support/configurations.hpp"
#include "support/problem.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

const compiled_tensorcore_variant& variant_named(std::string_view configuration) {
  for (const compiled_tensorcore_variant& v : compiled_tensorcore_variants())
    if (v.configuration == configuration) return v;
  FAIL("tests/CMakeLists.txt generates no tensor-core variant for " << configuration);
  throw;
}

tile_census census_of(std::string_view configuration, int batch, int query_length, int key_length) {
  const operator_configuration* c = operator_configuration_named(configuration);
  REQUIRE(c != nullptr);
  const attention_problem p = make_random_problem(c->desc, batch, query_length, key_length, 7);
  const tile_census census = variant_named(configuration).census(p);
  INFO(configuration << " B" << batch << " Lq" << query_length << " Lk" << key_length << ": " << census.tiles
                     << " tiles, hidden " << census.hidden << " of " << census.hidden_by_mask << ", whole "
                     << census.whole << " of " << census.whole_by_mask << "; first unsound: " << census.first_unsound);
  CHECK(census.unsound == 0);
  return census;
}

}  // namespace

TEST_CASE("tensor-core tile visibility never hides a shown key nor shows a hidden one, every masked configuration",
          "[tensorcore][modifiers]") {
  for (const compiled_tensorcore_variant& v : compiled_tensorcore_variants()) {
    const operator_configuration* c = operator_configuration_named(v.configuration);
    REQUIRE(c != nullptr);
    if (!c->desc.has_mask_mod() || c->tensorcore.empty()) continue;
    for (const shape& s : c->tensorcore) census_of(v.configuration, s.batch, s.query_length, s.key_length);
    census_of(v.configuration, 2, 300, 300);
    census_of(v.configuration, 1, 130, 700);
  }
}

TEST_CASE("tensor-core tile visibility of a sliding window finds every hidden and every whole tile, bf16 GQA 4/2",
          "[tensorcore][modifiers]") {
  for (const auto& [queries, keys] : {std::pair{300, 300}, std::pair{130, 700}, std::pair{1, 1000}}) {
    const tile_census census = census_of("bf16_modifiers", 2, queries, keys);
    CHECK(census.hidden_by_mask > 0);
    CHECK(census.hidden == census.hidden_by_mask);
    CHECK(census.whole == census.whole_by_mask);
  }
}

TEST_CASE("tensor-core tile visibility of prefix-LM or a causal window finds every hidden and every whole tile, "
          "bf16 GQA 4/2",
          "[tensorcore][modifiers]") {
  for (const auto& [queries, keys] : {std::pair{300, 300}, std::pair{130, 700}}) {
    const tile_census census = census_of("tensorcore_position_modifiers_bf16", 2, queries, keys);
    CHECK(census.hidden_by_mask > 0);
    CHECK(census.whole_by_mask > 0);
    CHECK(census.hidden == census.hidden_by_mask);
    CHECK(census.whole == census.whole_by_mask);
  }
}

TEST_CASE("tensor-core tile visibility of documents with causality reads the document ids of the tile's rows and "
          "keys, bf16 GQA 4/2",
          "[tensorcore][modifiers]") {
  // About four documents a row (support/problem.cpp): most tiles lie across no document's keys.
  for (const int length : {1000, 520}) {
    const tile_census census = census_of("tensorcore_documents_causal_bf16", 2, length, length);
    CHECK(census.hidden_by_mask > census.tiles / 2);
    CHECK(census.whole_by_mask > 0);
    CHECK(census.hidden == census.hidden_by_mask);
    CHECK(census.whole == census.whole_by_mask);
  }
}
