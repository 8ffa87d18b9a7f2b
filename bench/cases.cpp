#include "cases.hpp"

#include <algorithm>

#include "bench_document_mask.hpp"
#include "bench_gqa.hpp"
#include "bench_gqa_bf16.hpp"
#include "bench_gqa_causal.hpp"
#include "bench_long_causal.hpp"
#include "bench_mha_causal.hpp"
#include "bench_mha_small.hpp"
#include "bench_sliding_window.hpp"

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
  // Decode rotates 4 K/V caches of 32 MiB each, more than the 32 MiB L3, so K/V come from DRAM.
  static const std::vector<bench_case> cases = {
      {"prefill_gqa_causal", bench_gqa_causal::description, &bench_gqa_causal::run, 1, 1024, 1024},
      {"prefill_gqa", bench_gqa::description, &bench_gqa::run, 1, 2048, 2048},
      {"prefill_gqa_bf16", bench_gqa_bf16::description, &bench_gqa_bf16::run, 1, 2048, 2048},
      {"mha_small", bench_mha_small::description, &bench_mha_small::run, 16, 10, 10},
      {"decode_gqa", bench_gqa::description, &bench_gqa::run, 1, 1, 4096, 4},
      {"prefill_mha_causal", bench_mha_causal::description, &bench_mha_causal::run, 4, 512, 512},
      {"long_causal", bench_long_causal::description, &bench_long_causal::run, 1, 16384, 16384},
      {"sliding_window_16k", bench_sliding_window::description, &bench_sliding_window::run, 1, 16384, 16384, 1, 0,
       false, 1024},
      {"document_mask_16k", bench_document_mask::description, &bench_document_mask::run, 1, 16384, 16384, 1, 8,
       false},
  };
  return cases;
}

}  // namespace attngen::bench
