// Calls from many threads at once, and at every thread-pool size, give bitwise the results of serial
// calls: kernels keep no state between calls, and their reductions do not depend on the threads.
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "aot_all_options.hpp"
#include "aot_bf16_mqa.hpp"
#include "aot_gqa_causal.hpp"
#include "aot_modifiers.hpp"
#include "aot_module_encoder.hpp"
#include "kernels/aot_call.hpp"
#include "kernels/aot_module_call.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

// One call of one kernel on fixed inputs.
class recorded_call {
 public:
  virtual ~recorded_call() = default;
  /// Runs the call on fresh output storage: every output, one after the other; empty on error.
  virtual std::vector<float> run() const = 0;
  virtual std::string name() const = 0;
};

template <typename Kernel>
class operator_call : public recorded_call {
 public:
  operator_call(int batch, int query_length, int key_length, int seed)
      : problem_(make_random_problem(Kernel::description, batch, query_length, key_length, seed)) {}
  std::vector<float> run() const override {
    aot_call call(problem_);
    if (!Kernel::run(call.args()).ok()) return {};
    std::vector<float> outputs = call.output();
    const std::vector<float> lse = call.lse();
    outputs.insert(outputs.end(), lse.begin(), lse.end());
    return outputs;
  }
  std::string name() const override { return std::string(Kernel::name) + " " + problem_.name(); }

 private:
  attention_problem problem_;
};

class module_call : public recorded_call {
 public:
  module_call(int batch, int query_length, int key_length, int seed)
      : problem_(make_random_module_problem(aot_module_encoder::description, batch, query_length, key_length, seed)) {}
  std::vector<float> run() const override {
    aot_module_call call(problem_);
    if (!aot_module_encoder::run(call.args()).ok()) return {};
    std::vector<float> outputs = call.output();
    const std::vector<float> weights = call.weights();
    outputs.insert(outputs.end(), weights.begin(), weights.end());
    return outputs;
  }
  std::string name() const override { return "aot_module_encoder " + problem_.name(); }

 private:
  module_problem problem_;
};

// Five kernels; decoding, prefill and short shapes; every kernel variant.
std::vector<std::unique_ptr<recorded_call>> mixed_calls() {
  std::vector<std::unique_ptr<recorded_call>> calls;
  calls.push_back(std::make_unique<operator_call<aot_gqa_causal>>(1, 113, 113, 1));
  calls.push_back(std::make_unique<operator_call<aot_gqa_causal>>(2, 1, 777, 2));
  calls.push_back(std::make_unique<operator_call<aot_all_options>>(3, 17, 113, 3));
  calls.push_back(std::make_unique<operator_call<aot_all_options>>(1, 7, 9, 4));
  calls.push_back(std::make_unique<operator_call<aot_bf16_mqa>>(1, 113, 300, 5));
  calls.push_back(std::make_unique<operator_call<aot_modifiers>>(2, 300, 300, 6));
  calls.push_back(std::make_unique<module_call>(2, 33, 40, 7));
  calls.push_back(std::make_unique<module_call>(1, 1, 64, 8));
  return calls;
}

// Restores the default thread-pool size when a test ends.
struct default_threads_at_exit {
  ~default_threads_at_exit() { set_num_threads(0); }
};

}  // namespace

TEST_CASE("8 app threads calling the same and different kernels at once get bitwise the serial results",
          "[runtime][concurrency]") {
  const auto calls = mixed_calls();
  std::vector<std::vector<float>> serial;
  for (const auto& call : calls) {
    serial.push_back(call->run());
    REQUIRE(!serial.back().empty());
  }
  // Thread t runs every call, starting at call t: at each moment the threads run different kernels,
  // and each kernel is run by several threads over the test.
  constexpr int threads = 8, rounds = 3;
  std::vector<std::string> mismatches(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r)
        for (std::size_t n = 0; n < calls.size(); ++n) {
          const std::size_t c = (t + n) % calls.size();
          if (calls[c]->run() != serial[c]) mismatches[t] += calls[c]->name() + "; ";
        }
    });
  for (auto& worker : workers) worker.join();
  for (int t = 0; t < threads; ++t) {
    INFO("thread " << t);
    CHECK(mismatches[t].empty());
  }
}

TEST_CASE("outputs are bitwise the same on 1, 2 and 8 pool threads and on every repeated call",
          "[runtime][determinism]") {
  const default_threads_at_exit restore;
  const auto calls = mixed_calls();
  set_num_threads(1);
  std::vector<std::vector<float>> one_thread;
  for (const auto& call : calls) one_thread.push_back(call->run());
  for (const int pool : {2, 8}) {
    set_num_threads(pool);
    for (int repeat = 0; repeat < 2; ++repeat)
      for (std::size_t c = 0; c < calls.size(); ++c) {
        INFO(calls[c]->name() << " on " << pool << " threads, run " << repeat);
        CHECK(calls[c]->run() == one_thread[c]);
      }
  }
}
