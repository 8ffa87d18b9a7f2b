#include "cases.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "compiled_kernels.hpp"
#include "support/configurations.hpp"

namespace attngen::bench {

namespace {
// Pairs a causal (top-left) square of `length` queries sees, with a left window if nonzero.
double causal_pairs(double length, double window) {
  if (window <= 0 || window >= length) return length * (length + 1) / 2;
  return window * (window + 1) / 2 + (length - window) * (window + 1);
}

// Pairs one sequence's queries see under causality: query i sees keys up to i, shifted by Lk - Lq
// when aligned bottom-right.
double sequence_causal_pairs(const attention_desc& d, const sequence_size& s) {
  const std::int64_t offset = d.causal_mode == causal_alignment::bottom_right ? s.keys - s.queries : 0;
  double pairs = 0;
  for (std::int64_t i = 0; i < s.queries; ++i) pairs += double(std::clamp<std::int64_t>(i + offset + 1, 0, s.keys));
  return pairs;
}

// The generated kernel of configuration `name`; exits when bench/CMakeLists.txt generates none.
const testing::compiled_kernel& kernel_of(std::string_view name) {
  const testing::compiled_kernel* kernel = testing::find_kernel(testing::compiled_kernels, name);
  if (kernel == nullptr) {
    std::fprintf(stderr, "attngen-bench: bench/CMakeLists.txt generates no kernel bench_%.*s\n", int(name.size()),
                 name.data());
    std::exit(1);
  }
  return *kernel;
}

// The seed of decoding's kv lengths: every run and every case draws the same batch.
constexpr std::uint32_t kv_lengths_seed = 2024;
}  // namespace

std::vector<sequence_size> bench_case::sequences() const {
  std::vector<sequence_size> all;
  for (int length : ragged_lengths) all.push_back({length, length});
  if (!ragged_lengths.empty()) return all;
  all.assign(std::size_t(batch), {query_length, key_length});
  if (shortest_keys == 0) return all;
  // mt19937's output is the same with every standard library (its distributions' are not).
  std::mt19937 rng(kv_lengths_seed);
  for (sequence_size& s : all) s.keys = shortest_keys + int(rng() % std::uint32_t(key_length - shortest_keys + 1));
  return all;
}

double bench_case::visible_pairs() const {
  double pairs = 0;
  for (const sequence_size& s : sequences()) {
    if (!causal()) {
      pairs += double(s.queries) * s.keys;
    } else if (documents > 0) {
      const int length = (s.keys + documents - 1) / documents;
      for (int start = 0; start < s.keys; start += length) pairs += causal_pairs(std::min(length, s.keys - start), 0);
    } else if (window > 0) {
      pairs += causal_pairs(s.queries, window);
    } else {
      pairs += sequence_causal_pairs(desc, s);
    }
  }
  return pairs;
}

double bench_case::flops() const {
  const double dims = desc.qk_head_dim + desc.effective_v_head_dim();
  return 2.0 * desc.num_heads * visible_pairs() * dims;
}

double bench_case::bytes() const {
  const double element = size_of(desc.element_type), kv_element = size_of(desc.effective_kv_element());
  const double H = desc.num_heads, KVH = desc.effective_kv_heads(), D = desc.qk_head_dim,
               Dv = desc.effective_v_head_dim();
  // int8 keys and values carry a float32 scale per token and kv head each.
  const double scales = desc.has_kv_scales() ? 2 * sizeof(float) : 0;
  double queries = 0, keys = 0;
  for (const sequence_size& s : sequences()) {
    queries += s.queries;
    keys += s.keys;
  }
  return queries * H * (D + Dv) * element + keys * KVH * ((D + Dv) * kv_element + scales);
}

std::vector<std::int32_t> bench_case::document_ids() const {
  std::vector<std::int32_t> ids(std::size_t(batch) * key_length);
  const int length = (key_length + documents - 1) / documents;
  for (std::size_t n = 0; n < ids.size(); ++n) ids[n] = std::int32_t(int(n % std::size_t(key_length)) / length);
  return ids;
}

const std::vector<bench_case>& all_cases() {
  static const std::vector<bench_case> cases = [] {
    std::vector<bench_case> all;
    for (const testing::operator_configuration& c : testing::operator_configurations)
      for (const testing::bench_case_sizes& b : c.bench) {
        bench_case one{.name = std::string(b.case_name),
                       .desc = c.desc,
                       .run = kernel_of(c.name).run_operator,
                       .run_backward = kernel_of(c.name).run_backward,
                       .batch = b.sizes.batch,
                       .query_length = b.sizes.query_length,
                       .key_length = b.sizes.key_length,
                       .rotated_caches = b.rotated_caches,
                       .documents = b.documents,
                       .peers_compute_it =
                           !c.desc.has_score_mod() && !c.desc.has_mask_mod() && !c.desc.has_sequence_lengths(),
                       .window = b.window,
                       .shortest_keys = b.shortest_keys,
                       .ragged_lengths = std::vector<int>(b.ragged_lengths.begin(), b.ragged_lengths.end())};
        if (!b.ragged_lengths.empty()) {
          one.batch = b.ragged_lengths.size();
          one.query_length = one.key_length = *std::max_element(b.ragged_lengths.begin(), b.ragged_lengths.end());
        }
        if (!b.compared_with.empty()) {
          one.compared_with = std::string(b.compared_with);
          one.compared_run = kernel_of(b.compared_with).run_operator;
          one.compared_desc = testing::operator_configuration_named(b.compared_with)->desc;
        }
        all.push_back(std::move(one));
      }
    return all;
  }();
  return cases;
}

}  // namespace attngen::bench
