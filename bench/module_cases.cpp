#include "module_cases.hpp"

#include <cstdio>
#include <cstdlib>

#include "attngen/runtime/detail/module_part_times.hpp"
#include "compiled_kernels.hpp"
#include "kernels/aot_module_call.hpp"
#include "module/module_problem.hpp"
#include "support/configurations.hpp"
#include "timing.hpp"

namespace attngen::bench {

double module_bench_case::projection_flops() const {
  const double E = desc.embed, KVE = desc.kv_embed();
  return 2.0 * batch * (2 * queries * E * E + keys * (desc.effective_kdim() + desc.effective_vdim()) * KVE);
}

double module_bench_case::attention_flops() const {
  const double pairs = double(batch) * desc.num_heads * queries * keys;
  const double qk_passes = desc.weights == weights_output::none ? 1 : 2;  // the weights recompute q.k
  return 2.0 * pairs * desc.head_dim() * (qk_passes + 1);
}

const std::vector<module_bench_case>& module_cases() {
  static const std::vector<module_bench_case> cases = [] {
    std::vector<module_bench_case> all;
    for (const testing::module_configuration& c : testing::module_configurations)
      for (const testing::bench_case_sizes& b : c.bench) {
        const testing::compiled_kernel* kernel = testing::find_kernel(testing::compiled_kernels, c.name);
        if (kernel == nullptr) {
          std::fprintf(stderr, "attngen-bench: bench/CMakeLists.txt generates no kernel bench_%.*s\n",
                       int(c.name.size()), c.name.data());
          std::exit(1);
        }
        all.push_back({std::string(b.case_name), c.desc, kernel->run_module, b.sizes.batch, b.sizes.query_length,
                       b.sizes.key_length});
      }
    return all;
  }();
  return cases;
}

module_timing time_module(const module_bench_case& c, int threads) {
  set_num_threads(threads);
  testing::module_problem p = testing::make_random_module_problem(c.desc, c.batch, c.queries, c.keys, 1);
  if (auto padding = p.inputs.find("key_padding"); padding != p.inputs.end())
    for (int b = 0; b < c.batch; ++b)
      for (int s = 0; s < c.keys; ++s) padding->second.values[std::size_t(b) * c.keys + s] = s >= c.keys * 7 / 8;
  testing::aot_module_call call(p);
  const mha_args args = call.args();
  bool failed = false;
  auto run = [&](int) {
    if (status s = c.run(args); !s) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), s.message().c_str());
      failed = true;
    }
  };
  module_timing t;
  t.seconds = median_seconds(run);
  detail::module_part_times parts;
  detail::record_module_part_times(&parts);
  for (int n = 0; n < 10; ++n) run(n);
  detail::record_module_part_times(nullptr);
  t.projection_share = parts.projections / (parts.projections + parts.attention + parts.weights);
  if (failed) t.seconds = -1;
  return t;
}

std::string pytorch_module_arguments(const module_bench_case& c) {
  const mha_desc& d = c.desc;
  return std::to_string(c.batch) + " " + std::to_string(c.queries) + " " + std::to_string(c.keys) + " " +
         std::to_string(d.embed) + " " + std::to_string(d.num_heads) + " " + std::to_string(d.effective_kv_heads()) +
         " " + (d.self_attn ? "1" : "0") + " " + (d.key_padding != mask_kind::none ? "1" : "0") + " " +
         (d.weights == weights_output::averaged ? "1" : "0");
}

}  // namespace attngen::bench
