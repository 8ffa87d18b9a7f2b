#include "cases.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "compiled_kernels.hpp"
#include "support/configurations.hpp"

namespace attngen::bench {

namespace {
// Pairs a causal (top-left) square of `length` queries sees, with a left window if nonzero.
double causal_pairs(double length, double window) {
  if (window <= 0 || window >= length) return length * (length + 1) / 2;
  return window * (window + 1) / 2 + (length - window) * (window + 1);
}
}  // namespace

double bench_case::visible_pairs() const {
  if (!causal()) return double(query_length) * key_length;
  if (documents == 0) return causal_pairs(query_length, window);
  const int length = (key_length + documents - 1) / documents;
  double pairs = 0;
  for (int start = 0; start < key_length; start += length) pairs += causal_pairs(std::min(length, key_length - start), 0);
  return pairs;
}

double bench_case::flops() const {
  const double dims = desc.qk_head_dim + desc.effective_v_head_dim();
  return 2.0 * batch * desc.num_heads * visible_pairs() * dims;
}

double bench_case::bytes() const {
  const double element = size_of(desc.element_type);
  const double H = desc.num_heads, KVH = desc.effective_kv_heads(), D = desc.qk_head_dim,
               Dv = desc.effective_v_head_dim();
  return element * batch * (query_length * H * D + key_length * KVH * (D + Dv) + query_length * H * Dv);
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
        const testing::compiled_kernel* kernel = testing::find_kernel(testing::compiled_kernels, c.name);
        if (kernel == nullptr) {
          std::fprintf(stderr, "attngen-bench: bench/CMakeLists.txt generates no kernel bench_%.*s\n",
                       int(c.name.size()), c.name.data());
          std::exit(1);
        }
        all.push_back({.name = std::string(b.case_name),
                       .desc = c.desc,
                       .run = kernel->run_operator,
                       .batch = b.sizes.batch,
                       .query_length = b.sizes.query_length,
                       .key_length = b.sizes.key_length,
                       .rotated_caches = b.rotated_caches,
                       .documents = b.documents,
                       .peers_compute_it = !c.desc.has_score_mod() && !c.desc.has_mask_mod(),
                       .window = b.window});
      }
    return all;
  }();
  return cases;
}

}  // namespace attngen::bench
