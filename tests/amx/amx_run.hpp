#pragma once
/// A generated tile-code variant (attngen tensorcore) run over a test problem by the AMX path's tile
/// code (attngen/amx/flash_forward.hpp) on Tiles: emulated_tiles in amx_emulated_run.cpp's registry,
/// hardware_tiles where a translation unit compiles it for AMX (amx_hardware_variants.cpp). Include
/// it after the tile code, inside the AMX target region where there is one.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensorcore/tensorcore_host_run.hpp"

namespace attngen::testing {

/// `p` run in tasks of `task_groups` row groups, on one thread.
template <typename Tiles, typename Variant>
tensorcore_result run_amx_tile_code(const attention_problem& p, int task_groups) {
  host_memory memory;
  return run_tensorcore<Variant>(p, memory, [&](const tensorcore::forward_params& params, const Variant& variant) {
    amx::forward_call call;
    call.params = params;
    call.variant = variant;
    call.task_groups = task_groups;
    call.tasks = amx::forward_tasks(params, task_groups);
    std::vector<unsigned char> scratch(amx::scratch_for(Variant::head_dim).bytes + 64);
    const auto address = reinterpret_cast<std::uintptr_t>(scratch.data());
    amx::run_worker<Tiles, Variant>(&call, scratch.data() + (64 - address % 64) % 64);
  });
}

/// `p` run in tasks of one row group and in tasks of the most, which must agree bit for bit (a row's
/// result does not depend on its task): the first.
template <typename Tiles, typename Variant>
tensorcore_result run_amx_in_every_task_size(const attention_problem& p) {
  const tensorcore_result one = run_amx_tile_code<Tiles, Variant>(p, 1);
  const tensorcore_result most = run_amx_tile_code<Tiles, Variant>(p, amx::max_task_groups);
  const auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
             return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y);
           });
  };
  if (!same_bits(one.output, most.output) || !same_bits(one.lse, most.lse))
    throw std::runtime_error("tasks of 1 and of " + std::to_string(amx::max_task_groups) +
                             " row groups give different bits");
  return one;
}

/// The runner of `Variant` where the AMX path takes its description (`Takes`), else none.
template <typename Tiles, typename Variant, bool Takes>
constexpr tensorcore_result (*amx_runner())(const attention_problem&) {
  if constexpr (Takes) return &run_amx_in_every_task_size<Tiles, Variant>;
  else return nullptr;
}

}  // namespace attngen::testing
