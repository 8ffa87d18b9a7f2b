// Memory held by the process does not grow with the number of calls: 10,000 calls (accepted and
// refused, operator and module, C++ and C) leave the heap where the first calls left it. The
// sanitized build (scripts/test --sanitize) adds LeakSanitizer's check of what is left at exit.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <malloc.h>
#include <string>
#include <vector>

#include "aot_all_options.h"
#include "aot_all_options.hpp"
#include "aot_gqa_causal.hpp"
#include "aot_module_encoder.hpp"
#include "c_api/c_callers.h"
#include "kernels/aot_call.hpp"
#include "kernels/aot_module_call.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNGEN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTNGEN_TEST_ASAN 1
#endif
#ifdef ATTNGEN_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#endif

using namespace attngen;
using namespace attngen::testing;

namespace {

// Bytes the allocator has handed out and not had back (AddressSanitizer's allocator replaces
// glibc's, whose counters then see nothing).
std::size_t heap_in_use() {
#ifdef ATTNGEN_TEST_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

// The heap growth over `calls` calls of `call`, after `warm_up` calls that let caches and the thread
// pool settle.
long long growth_over(int warm_up, int calls, const std::function<void()>& call) {
  for (int n = 0; n < warm_up; ++n) call();
  const std::size_t before = heap_in_use();
  for (int n = 0; n < calls; ++n) call();
  return static_cast<long long>(heap_in_use()) - static_cast<long long>(before);
}

// Less than one byte per call: any per-call leak, even of one small allocation, exceeds it.
constexpr int call_count = 10'000;
constexpr long long tolerated_growth = 4096;

}  // namespace

TEST_CASE("10,000 accepted and refused calls of an operator, a module and the C API do not grow the heap",
          "[runtime][leaks]") {
  const auto gqa = make_random_problem(aot_gqa_causal::description, 1, 3, 5, 41);
  aot_call gqa_call(gqa);
  const attention_args gqa_args = gqa_call.args();
  attention_args gqa_wrong_shape = gqa_args;
  gqa_wrong_shape.k.shape[2] = 3;

  const auto module = make_random_module_problem(aot_module_encoder::description, 1, 2, 3, 42);
  aot_module_call module_call(module);
  const mha_args module_args = module_call.args();

  const auto options = make_random_problem(aot_all_options::description, 1, 2, 3, 43);
  aot_call options_call(options);
  const attention_args options_args = options_call.args();
  const auto floats = [](const tensor_view& t) { return static_cast<float*>(t.data); };
  const attngen_attention_args c_args =
      all_options_args(floats(options_args.q), floats(options_args.k), floats(options_args.v),
                       floats(options_args.mask), static_cast<std::uint8_t*>(options_args.key_padding.data),
                       floats(options_args.output), floats(options_args.lse), 1, 2, 3);
  attngen_attention_args c_wrong_dtype = c_args;
  c_wrong_dtype.v.dtype = ATTNGEN_F16;

  int failures = 0;
  const auto count = [&failures](bool ok) { failures += ok ? 0 : 1; };
  const auto call = [&] {
    count(aot_gqa_causal::run(gqa_args).ok());
    count(aot_gqa_causal::run(gqa_wrong_shape).code() == error_code::wrong_shape);
    count(aot_module_encoder::run(module_args).ok());
    attngen_error error;
    count(aot_all_options_run(&c_args, &error) == ATTNGEN_OK);
    count(aot_all_options_run(&c_wrong_dtype, &error) == ATTNGEN_WRONG_DTYPE);
  };
  // Five calls each time.
  const long long growth = growth_over(200, call_count / 5, call);
  CHECK(failures == 0);
  INFO("heap grew by " << growth << " bytes over " << call_count << " calls");
  CHECK(growth < tolerated_growth);
}
