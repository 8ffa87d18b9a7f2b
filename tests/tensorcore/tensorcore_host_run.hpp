#pragma once
/// A generated tensor-core variant run by the tile code on the host model of the warp.

#include <algorithm>
#include <cstring>
#include <string>
#include <deque>
#include <vector>

#include "tensorcore/tensorcore_run.hpp"

namespace attngen::testing {

/// Arrays the host model reads where they are: kept for the run.
class host_memory {
 public:
  template <typename T>
  T* place(const std::vector<T>& values) {
    if (values.empty()) return nullptr;
    auto& kept = held_.emplace_back(values.size() * sizeof(T));
    std::memcpy(kept.data(), values.data(), kept.size());
    return reinterpret_cast<T*>(kept.data());
  }
  template <typename T>
  void read(const T* placed, std::vector<T>& into) {
    std::memcpy(into.data(), placed, into.size() * sizeof(T));
  }

 private:
  std::deque<std::vector<unsigned char>> held_;
};

/// The kernel on the host model, then the merge where its keys were split.
template <typename Variant>
void run_on_host(const tensorcore::forward_params& params, const Variant& variant) {
  tensorcore::run_forward_on_host<Variant::element, Variant::head_dim, Variant::warps>(params, variant);
  if (tensorcore::splits_of(params) > 1)
    tensorcore::run_merge_on_host<Variant::element, Variant::v_head_dim>(params, variant);
}

template <typename Variant>
tensorcore_result run_tensorcore_on_host(const attention_problem& p) {
  host_memory memory;
  return run_tensorcore<Variant>(p, memory, &run_on_host<Variant>);
}

template <typename Variant>
void run_tensorcore_batch_on_host(sequence_batch& batch, int key_splits) {
  host_memory memory;
  run_tensorcore_batch<Variant>(batch, memory, &run_on_host<Variant>, key_splits);
}

/// The census of `p`'s tiles: every block of the kernel's grid against every tile of keys (keys_per_tile) of its
/// sequence, each classified by the variant and checked pair by pair with its mask.
template <typename Variant>
tile_census census_of_tiles(const attention_problem& p) {
  host_memory memory;
  const Variant variant = variant_of<Variant>(p, memory);
  tensorcore::forward_params params{};
  params.batch = p.batch;
  params.heads = p.desc.num_heads;
  params.kv_heads = p.desc.effective_kv_heads();
  params.query_length = p.query_length;
  params.key_length = p.key_length;
  const int rows = tensorcore::variant_tiles<Variant>::rows, keys = tensorcore::variant_tiles<Variant>::keys;
  const tensorcore::grid3 grid = tensorcore::forward_grid(params, rows);
  tile_census census;
  for (int z = 0; z < grid.z; ++z)
    for (int y = 0; y < grid.y; ++y)
      for (int x = 0; x < grid.x; ++x) {
        const tensorcore::sequence_extent sequence = tensorcore::extent_of(params, z);
        const tensorcore::block_extent block = tensorcore::extent_of_block(params, rows, {x, y, z}, sequence);
        if (block.last_query < block.first_query) continue;
        for (int first_key = 0; first_key < sequence.keys; first_key += keys) {
          const int last_key = std::min(first_key + keys, sequence.keys) - 1;
          const tensorcore::tile_bounds t{z, block.first_head, block.last_head, block.first_query, block.last_query,
                                          first_key, last_key};
          const tensorcore::tile_visibility kind = variant.visibility_of_tile(t, sequence);
          bool any_shown = false, any_hidden = false;
          for (int h = t.first_head; h <= t.last_head; ++h)
            for (int q = t.first_query; q <= t.last_query; ++q)
              for (int kv = first_key; kv <= last_key; ++kv)
                (variant.shows(z, h, q, kv, sequence) ? any_shown : any_hidden) = true;
          ++census.tiles;
          census.hidden += kind == tensorcore::tile_visibility::hidden;
          census.whole += kind == tensorcore::tile_visibility::whole;
          census.hidden_by_mask += !any_shown;
          census.whole_by_mask += !any_hidden;
          const bool unsound = (kind == tensorcore::tile_visibility::hidden && any_shown) ||
                               (kind == tensorcore::tile_visibility::whole && any_hidden);
          if (unsound && census.unsound++ == 0)
            census.first_unsound = "batch " + std::to_string(z) + " heads " + std::to_string(t.first_head) + "-" +
                                   std::to_string(t.last_head) + " queries " + std::to_string(t.first_query) + "-" +
                                   std::to_string(t.last_query) + " keys " + std::to_string(first_key) + "-" +
                                   std::to_string(last_key);
        }
      }
  return census;
}

}  // namespace attngen::testing
