#pragma once
/// Source text of the typed C++ wrapper around a generated kernel.

#include <string>
#include <vector>

#include "attngen/attention.hpp"
#include "attngen/module.hpp"
#include "attngen/codegen/visibility_table.hpp"

namespace attngen::codegen {

struct wrapper_sources {
  std::string header;  ///< <name>.hpp
  std::string source;  ///< <name>.cpp, with the C API's functions
  std::string c_header;  ///< <name>.h: the C API (attngen/c_api.h)
};

/// The wrapper calls the variants' Halide functions (see halide_function_name) and picks one per call
/// with attngen::choose_variant, given the short_queries tiling's queries per tile; `target_names` are
/// recorded in the header. Where the mask modifier reads captures, `visibility_tiles` holds each
/// variant's tiles on each CPU target ([variant][target], codegen::cpu_variant_tiles): host calls
/// compute the visibility table with the visibility part first, and pass its slices to the CPU
/// variant. Calls on a GPU go to the functions of `gpu_apis` ("cuda", "opencl"), whose targets
/// `gpu_target_names` are recorded too.
wrapper_sources emit_wrapper(const std::string& name, const std::string& cpp_namespace, const attention_desc& desc,
                             int single_query_threshold,
                             const std::vector<std::vector<visibility_grid>>& visibility_tiles,
                             const std::vector<std::string>& target_names,
                             const std::vector<std::string>& gpu_apis = {},
                             const std::vector<std::string>& gpu_target_names = {});

/// The same for a module kernel: `run(const attngen::mha_args&)`. On a CPU it runs the variant's
/// attention between the parts every variant shares (codegen::cpu_module_parts); a GPU function is the
/// whole module.
wrapper_sources emit_module_wrapper(const std::string& name, const std::string& cpp_namespace, const mha_desc& desc,
                                    int single_query_threshold, const std::vector<std::string>& target_names,
                                    const std::vector<std::string>& gpu_apis = {},
                                    const std::vector<std::string>& gpu_target_names = {});

}  // namespace attngen::codegen
