#pragma once
/// Test cases made from the registry of configurations (support/configurations.hpp): each suite
/// registers one Catch2 test case per configuration it runs, named after the configuration and the
/// sizes, so that ctest lists, runs (in parallel) and reports each configuration on its own.

#include <functional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "support/configurations.hpp"

namespace attngen::testing {

/// Registers the Catch2 test case `name` with `tags`, running `body`: TEST_CASE for a name made at run
/// time. Call it during static initialisation, from a namespace-scope initialiser.
void register_test_case(const std::string& name, const std::string& tags, std::function<void()> body,
                        std::source_location where = std::source_location::current());

/// "name (about)": how test names start.
std::string title(const operator_configuration& c);
std::string title(const module_configuration& c);

/// "Lq, Lk in {1, 7, 17}, batch 1 and 3", and the target when one is named.
std::string sizes_text(const length_matrix& m);
/// "(B, Lq, Lk) (1, 113, 113), (3, 17, 7)".
std::string sizes_text(const shape* first, const shape* last);
template <int N>
std::string sizes_text(const short_list<shape, N>& shapes) {
  return sizes_text(shapes.begin(), shapes.end());
}
inline std::string sizes_text(const std::vector<shape>& shapes) {
  return sizes_text(shapes.data(), shapes.data() + shapes.size());
}

/// Whether the configuration called `name` has calls for backend `b` (aot, cuda or opencl) that `b`
/// can run.
bool has_calls(std::string_view name, backend b);
/// The text form of the description of the configuration called `name`; empty when none is.
std::string description_text_of(std::string_view name);

/// The sizes of the GPU calls with their tensors `where`.
std::vector<shape> calls_with(const short_list<gpu_call, 4>& calls, placement where);
/// "on device tensors", "with host tensors copied in and out".
std::string placement_text(placement where);

}  // namespace attngen::testing
