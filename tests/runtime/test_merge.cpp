// Partial results over slices of one sequence (global positions) merged with attngen::merge: any
// split of the queries and keys, merged in any order, gives the whole sequence's attention; and the
// calls the runtime refuses, each with the named error and nothing written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "aot_positions_causal_top_left.hpp"
#include "aot_positions_gqa.hpp"
#include "aot_positions_window_document.hpp"
#include "kernels/aot_call.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

using namespace attngen;
using namespace attngen::testing;
using Catch::Matchers::StartsWith;

namespace {

// One call's (output, lse) as float32, (B, Lq, H, Dv) and (B, H, Lq).
struct partial {
  std::vector<float> output, lse;
  attention_partial views(const attention_problem& p) {
    const std::int64_t B = p.batch, Lq = p.query_length, H = p.desc.num_heads, Dv = p.desc.effective_v_head_dim();
    return {make_tensor(output.data(), {B, Lq, H, Dv}), make_tensor(lse.data(), {B, H, Lq})};
  }
};

template <typename Kernel>
partial run_slice(const attention_problem& slice) {
  aot_call call(slice);
  const status s = Kernel::run(call.args());
  INFO(s.message());
  REQUIRE(s.ok());
  return {call.output(), call.lse()};
}

// Cut points of [0, length) into `parts` slices, some possibly empty, in increasing order.
std::vector<int> random_cuts(int length, int parts, std::mt19937& rng) {
  std::vector<int> cuts = {0, length};
  for (int n = 1; n < parts; ++n) cuts.push_back(int(rng() % unsigned(length + 1)));
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

// The whole's attention from partial results: its queries cut into slices, and each query slice's
// keys cut into slices merged in a random order, each merge into the running result in place. The
// merges counted for the tolerance: a row's key slices less one.
template <typename Kernel>
void check_slices_merge_to_whole(const attention_problem& whole, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const attention_desc& d = whole.desc;
  const int B = whole.batch, H = d.num_heads, Dv = d.effective_v_head_dim();
  const std::vector<int> query_cuts = random_cuts(whole.query_length, 3, rng);
  const int key_parts = 2 + int(rng() % 4u);
  std::vector<float> output(whole.output_size()), lse(whole.lse_size());
  for (std::size_t qs = 0; qs + 1 < query_cuts.size(); ++qs) {
    const int first_query = query_cuts[qs], queries = query_cuts[qs + 1] - first_query;
    if (queries == 0) continue;
    std::vector<int> key_cuts = random_cuts(whole.key_length, key_parts, rng);
    std::vector<std::size_t> order(key_cuts.size() - 1);
    for (std::size_t n = 0; n < order.size(); ++n) order[n] = n;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<attention_problem> slices;
    std::vector<partial> parts;
    for (std::size_t n : order) {
      slices.push_back(slice_of(whole, first_query, queries, key_cuts[n], key_cuts[n + 1] - key_cuts[n]));
      parts.push_back(run_slice<Kernel>(slices.back()));
    }
    partial merged = parts[0];
    for (std::size_t n = 1; n < parts.size(); ++n) {
      const attention_partial pair[] = {merged.views(slices[0]), parts[n].views(slices[n])};
      const attention_partial into = merged.views(slices[0]);
      REQUIRE(merge(pair, 2, into.output, into.lse).ok());
    }
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < queries; ++i)
        for (int h = 0; h < H; ++h) {
          std::copy_n(&merged.output[((std::size_t(b) * queries + i) * H + h) * Dv], Dv,
                      &output[((std::size_t(b) * whole.query_length + first_query + i) * H + h) * Dv]);
          lse[(std::size_t(b) * H + h) * whole.query_length + first_query + i] =
              merged.lse[(std::size_t(b) * H + h) * queries + i];
        }
  }
  const comparison c = compare_with_reference(whole, reference_attention(whole), output, lse, key_parts - 1);
  INFO(c.first_failure);
  CHECK(c.ok);
}

template <typename Kernel>
void check_random_splits(int batch, int length) {
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    const attention_problem whole = make_whole_problem(Kernel::description, batch, length, length, seed);
    INFO("seed " << seed);
    check_slices_merge_to_whole<Kernel>(whole, seed);
  }
}

constexpr std::uint8_t poison = 0xAB;

bool all_bytes(const std::vector<float>& values, std::uint8_t byte) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(values.data());
  return std::all_of(bytes, bytes + values.size() * sizeof(float), [&](std::uint8_t b) { return b == byte; });
}

}  // namespace

TEST_CASE("merge: slices of queries and keys, merged in any order, give the whole (GQA, no mask)", "[merge][positions]") {
  check_random_splits<aot_positions_gqa>(2, 61);
}

TEST_CASE("merge: slices of queries and keys, merged in any order, give the whole (GQA, causal top-left)",
          "[merge][positions]") {
  check_random_splits<aot_positions_causal_top_left>(2, 150);
}

TEST_CASE("merge: slices of queries and keys, merged in any order, give the whole (window and document mask)",
          "[merge][positions]") {
  check_random_splits<aot_positions_window_document>(2, 97);
}

TEST_CASE("merge: a part that saw no key leaves the other part's result bit for bit", "[merge]") {
  const attention_problem whole = make_whole_problem(aot_positions_gqa::description, 1, 9, 20, 3);
  const attention_problem seen = slice_of(whole, 0, 9, 0, 20), none = slice_of(whole, 0, 9, 20, 0);
  partial a = run_slice<aot_positions_gqa>(seen), empty = run_slice<aot_positions_gqa>(none);
  REQUIRE(std::all_of(empty.lse.begin(), empty.lse.end(), [](float x) { return x == -INFINITY; }));
  partial merged = a;
  const attention_partial parts[] = {empty.views(none), a.views(seen)};
  const attention_partial into = merged.views(seen);
  REQUIRE(merge(parts, 2, into.output, into.lse).ok());
  CHECK(merged.output == a.output);
  CHECK(merged.lse == a.lse);
}

TEST_CASE("merge: rows no part saw get output 0 and lse -inf; with sinks, the sink's logit", "[merge][sinks]") {
  std::vector<float> out(4, 7.0f), lse(2, -INFINITY), merged_out(4), merged_lse(2);
  const attention_partial part{make_tensor(out.data(), {1, 1, 2, 2}), make_tensor(lse.data(), {1, 2, 1})};
  REQUIRE(merge(&part, 1, make_tensor(merged_out.data(), {1, 1, 2, 2}), make_tensor(merged_lse.data(), {1, 2, 1})).ok());
  CHECK(merged_out == std::vector<float>(4, 0.0f));
  CHECK(merged_lse == std::vector<float>(2, -INFINITY));
  std::vector<float> sinks = {0.5f, -1.0f};
  REQUIRE(merge(&part, 1, make_tensor(merged_out.data(), {1, 1, 2, 2}), make_tensor(merged_lse.data(), {1, 2, 1}),
                make_tensor(sinks.data(), {2}))
              .ok());
  CHECK(merged_out == std::vector<float>(4, 0.0f));
  CHECK(merged_lse == sinks);
}

TEST_CASE("merge: a sink joins each row's denominator once, however many parts", "[merge][sinks]") {
  // Two parts of one row (H 1, Dv 1): outputs 1 and 3 at log-sum-exps log 2 and log 6, a sink at log 4.
  std::vector<float> out_a = {1.0f}, out_b = {3.0f}, lse_a = {std::log(2.0f)}, lse_b = {std::log(6.0f)};
  std::vector<float> sinks = {std::log(4.0f)}, out(1), lse(1);
  const attention_partial parts[] = {{make_tensor(out_a.data(), {1, 1, 1, 1}), make_tensor(lse_a.data(), {1, 1, 1})},
                                     {make_tensor(out_b.data(), {1, 1, 1, 1}), make_tensor(lse_b.data(), {1, 1, 1})}};
  REQUIRE(merge(parts, 2, make_tensor(out.data(), {1, 1, 1, 1}), make_tensor(lse.data(), {1, 1, 1}),
                make_tensor(sinks.data(), {1}))
              .ok());
  CHECK(out[0] == Approx((2.0 * 1 + 6.0 * 3) / 12.0).epsilon(1e-6));
  CHECK(lse[0] == Approx(std::log(12.0)).epsilon(1e-6));
}

TEST_CASE("merge: packed (total_q, H, Dv) results merge like dense ones", "[merge]") {
  std::vector<float> out_a = {1, 2, 3, 4}, out_b = {5, 6, 7, 8}, lse_a = {0, 1}, lse_b = {1, 0}, out(4), lse(2);
  const attention_partial parts[] = {{make_tensor(out_a.data(), {2, 1, 2}), make_tensor(lse_a.data(), {1, 2})},
                                     {make_tensor(out_b.data(), {2, 1, 2}), make_tensor(lse_b.data(), {1, 2})}};
  REQUIRE(merge(parts, 2, make_tensor(out.data(), {2, 1, 2}), make_tensor(lse.data(), {1, 2})).ok());
  const double w = 1.0 / (1.0 + std::exp(1.0));  // weight of the part with the smaller lse
  CHECK(out[0] == Approx(w * 1 + (1 - w) * 5));
  CHECK(out[2] == Approx((1 - w) * 3 + w * 7));
  CHECK(lse[0] == Approx(std::log(1.0 + std::exp(1.0))));
}

TEST_CASE("merge: a part of another shape is refused, naming it, nothing written", "[merge][errors]") {
  std::vector<float> out(2 * 3 * 4 * 5, 1.0f), lse(2 * 4 * 3, 0.0f), short_lse(2 * 4 * 2, 0.0f);
  std::vector<float> merged_out(out.size()), merged_lse(lse.size());
  std::memset(merged_out.data(), poison, merged_out.size() * sizeof(float));
  std::memset(merged_lse.data(), poison, merged_lse.size() * sizeof(float));
  const attention_partial parts[] = {{make_tensor(out.data(), {2, 3, 4, 5}), make_tensor(lse.data(), {2, 4, 3})},
                                     {make_tensor(out.data(), {2, 3, 4, 5}), make_tensor(short_lse.data(), {2, 4, 2})}};
  const status s = merge(parts, 2, make_tensor(merged_out.data(), {2, 3, 4, 5}), make_tensor(merged_lse.data(), {2, 4, 3}));
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("parts[1].lse: expected Lq 3"));
  CHECK(all_bytes(merged_out, poison));
  CHECK(all_bytes(merged_lse, poison));
}

TEST_CASE("merge: an lse of another type and an output overlapping a part are refused, naming them", "[merge][errors]") {
  std::vector<float> out(8), lse(4), merged(8);
  std::vector<std::int32_t> int_lse(4);
  const attention_partial wrong_type{make_tensor(out.data(), {1, 4, 1, 2}), make_tensor(int_lse.data(), dtype::i32, {1, 1, 4})};
  status s = merge(&wrong_type, 1, make_tensor(merged.data(), {1, 4, 1, 2}), make_tensor(lse.data(), {1, 1, 4}));
  CHECK(s.code() == error_code::wrong_dtype);
  CHECK_THAT(s.message(), StartsWith("parts[0].lse: expected element type f32"));
  // The output shifted by one element over the part's: neither the same tensor nor apart.
  std::vector<float> shared(9), part_lse(4);
  const attention_partial part{make_tensor(shared.data(), {1, 4, 1, 2}), make_tensor(part_lse.data(), {1, 1, 4})};
  s = merge(&part, 1, make_tensor(shared.data() + 1, {1, 4, 1, 2}), make_tensor(lse.data(), {1, 1, 4}));
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("output: overlaps parts[0].output"));
}

TEST_CASE("global positions: a negative start is refused, naming positions, nothing written", "[positions][errors]") {
  attention_problem p = make_random_problem(aot_positions_causal_top_left::description, 1, 5, 9, 2);
  p.positions[int(global_position::key_start)] = -1;
  aot_call call(p);
  call.poison_outputs(poison);
  const status s = aot_positions_causal_top_left::run(call.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("positions: key_start (positions[1]) = -1 is negative"));
  CHECK(call.outputs_all_equal(poison));
}

TEST_CASE("global positions: a slice past the whole sequence's end is refused, naming positions", "[positions][errors]") {
  attention_problem p = make_random_problem(aot_positions_causal_top_left::description, 1, 5, 9, 2);
  p.positions[int(global_position::query_start)] = 3;
  p.positions[int(global_position::query_total)] = 7;
  aot_call call(p);
  call.poison_outputs(poison);
  const status s = aot_positions_causal_top_left::run(call.args());
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("positions: query_start (positions[0]) = 3 plus the call's Lq (5) exceeds "
                                     "query_total (positions[2]) = 7"));
  CHECK(call.outputs_all_equal(poison));
}

TEST_CASE("global positions: a captured tensor shorter than the whole sequence is refused, naming it",
          "[positions][errors]") {
  // The document ids span the whole sequence's keys; a call that gives them for its slice alone is refused.
  const attention_problem p = make_random_problem(aot_positions_window_document::description, 1, 5, 9, 2);
  aot_call call(p);
  call.poison_outputs(poison);
  attention_args args = call.args();
  args.captures[0].shape[1] -= 1;
  const status s = aot_positions_window_document::run(args);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("document: spans the whole sequence: expected key_total " +
                                     std::to_string(p.key_total()) + " (positions[3]), got " +
                                     std::to_string(p.key_total() - 1)));
  CHECK(call.outputs_all_equal(poison));
}

TEST_CASE("global positions: a call without positions is refused, naming the feature", "[positions][errors]") {
  const attention_problem p = make_random_problem(aot_positions_gqa::description, 1, 5, 9, 2);
  aot_call call(p);
  attention_args args = call.args();
  args.positions = {};
  const status s = aot_positions_gqa::run(args);
  CHECK(s.code() == error_code::null_pointer);
  CHECK_THAT(s.message(), StartsWith("positions:"));
}
