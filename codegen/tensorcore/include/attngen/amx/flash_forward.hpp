#pragma once
/// FlashAttention-2's forward pass on the AMX tiles of Intel CPUs (Sapphire Rapids and later), for
/// bf16 descriptions: the Variant is the tensor-core path's (attngen/tensorcore/flash_forward.hpp
/// documents its hooks: score, key_end, plain_key_end, visibility_of_tile), so the masks and modifiers are lowered once
/// for both. Tiles is hardware_tiles.hpp's or, for the tests, emulated_tiles.hpp's.
///
/// A task is up to 512 rows ((query, head) pairs of one kv head's group, in groups of 32) against every
/// key it can see, in blocks of 32 keys. Scores are computed transposed, Sᵀ = K qᵀ: K's rows are the
/// A tiles as they lie in memory, and q is packed once per task into B tiles (bf16 pairs of the head
/// dim, a column per row). In Sᵀ a vector holds one key's scores for 16 rows, so the online softmax
/// works lane by lane, with no reduction across lanes, and its weights pack straight into the B tiles
/// of Oᵀ = Vᵀ Pᵀ, whose A tiles are the key block's V transposed, packed once for the task's groups.
/// Oᵀ lives in the scratch (f32, a lane per row) and is rescaled there when a row's maximum grows.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "attngen/amx/call.hpp"
#include "attngen/simd/vectors.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace attngen::amx {
namespace {

using namespace attngen::simd;

/// Task `task` of `p` with `task_groups` row groups a task (forward_call documents the order), in
/// `scratch` laid out as scratch_for(D).
template <int D, typename Tiles, typename Variant>
void forward_task(Tiles& tiles, const tensorcore::forward_params& p, const Variant& variant, int task_groups,
                  int task, unsigned char* scratch) {
  static_assert(D % 32 == 0, "the AMX path takes head dims that are multiples of 32");
  constexpr int chunks = D / 32, out_tiles = D / 16;
  constexpr scratch_layout layout = scratch_for(D);
  constexpr float log2e = 1.4426950408889634f, ln2 = 0.6931471805599453f;
  const int group = p.heads / p.kv_heads;
  const std::int64_t rows = std::int64_t(p.query_length) * group;
  const int task_rows = task_groups * group_rows;
  const int row_tasks = int((rows + task_rows - 1) / task_rows);
  const int batch = task / (p.kv_heads * row_tasks);
  const int kv_head = task / row_tasks % p.kv_heads;
  const std::int64_t first_row = std::int64_t(task % row_tasks) * task_rows;
  const int rows_here = int(rows - first_row < task_rows ? rows - first_row : task_rows);
  const int groups = (rows_here + group_rows - 1) / group_rows;
  // Dense tensors of equal lengths: the variant's hooks see one sequence per batch entry.
  const tensorcore::sequence_extent sequence{p.query_length, p.key_length, 0};

  // Row slot s of the task is row first_row + s of the kv head's group: query-major, head-minor.
  struct row_position {
    int query, head;
  };
  auto row_of = [&](int slot) {
    const std::int64_t r = first_row + slot;
    return row_position{int(r / group), kv_head * group + int(r % group)};
  };

  unsigned char* const q_tiles = scratch + layout.q_tiles;
  float* const out_values = reinterpret_cast<float*>(scratch + layout.out_tiles);
  unsigned char* const v_tiles = scratch + layout.v_tiles;
  auto* const k_block = reinterpret_cast<std::uint16_t*>(scratch + layout.k_rows);
  float* const scores = reinterpret_cast<float*>(scratch + layout.scores);
  unsigned char* const weights = scratch + layout.weights;
  // q's B tile for group g, head-dim chunk c, row tile t: row k holds each row's dims 32c + 2k, 2k + 1.
  auto q_tile = [&](int g, int c, int t) { return q_tiles + ((g * chunks + c) * 2 + t) * tile_bytes; };
  // Oᵀ for group g, output dims 16j onwards, row tile t: 16 dims of 16 rows.
  auto out_tile = [&](int g, int j, int t) { return out_values + ((g * out_tiles + j) * 2 + t) * 256; };

  const auto* q_data = static_cast<const std::uint16_t*>(p.q) + batch * p.q_strides.batch;
  const auto* k_data = static_cast<const std::uint16_t*>(p.k) + batch * p.k_strides.batch + kv_head * p.k_strides.head;
  const auto* v_data = static_cast<const std::uint16_t*>(p.v) + batch * p.v_strides.batch + kv_head * p.v_strides.head;

  // Each group's keys: those past key_end are hidden from all its rows; blocks before plain_end need
  // no score() (a positive scale keeps the maximum of the dots the maximum of the scores).
  int key_end[max_task_groups] = {}, plain_end[max_task_groups] = {}, task_key_end = 0;
  for (int g = 0; g < groups; ++g) {
    const int last_slot = (g + 1) * group_rows < rows_here ? (g + 1) * group_rows - 1 : rows_here - 1;
    const int end = variant.key_end(row_of(last_slot).query, sequence);
    key_end[g] = end < 0 ? 0 : end < p.key_length ? end : p.key_length;
    const int plain = p.scale > 0.0f ? variant.plain_key_end(row_of(g * group_rows).query, sequence) : 0;
    plain_end[g] = plain < key_end[g] ? plain : key_end[g];
    task_key_end = key_end[g] > task_key_end ? key_end[g] : task_key_end;
  }

  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < 2; ++t)
      for (int c = 0; c < chunks; ++c) {
        u32x16 pairs[16];
        for (int n = 0; n < 16; ++n) {
          const int slot = g * group_rows + 16 * t + n;
          if (slot >= rows_here) {
            pairs[n] = u32x16{};
            continue;
          }
          const row_position r = row_of(slot);
          pairs[n] = load<u32x16>(q_data + r.query * p.q_strides.position + r.head * p.q_strides.head + 32 * c);
        }
        transpose(pairs);
        for (int k = 0; k < 16; ++k) store(q_tile(g, c, t) + 64 * k, pairs[k]);
      }
  std::memset(out_values, 0, std::size_t(groups) * out_tiles * 2 * tile_bytes);
  f32x16 running_max[max_task_groups][2], running_sum[max_task_groups][2];
  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < 2; ++t) {
      running_max[g][t] = splat(-INFINITY);
      running_sum[g][t] = splat(0.0f);
    }

  // What the mask modifier does to group g's rows over the block of keys from first_key: its rows are
  // consecutive slots, whole groups of heads where they span several queries.
  auto visibility = [&](int g, int first_key) {
    const row_position first = row_of(g * group_rows);
    const row_position last = row_of((g + 1) * group_rows < rows_here ? (g + 1) * group_rows - 1 : rows_here - 1);
    const bool one_query = first.query == last.query;
    const int last_key = (first_key + block_keys < key_end[g] ? first_key + block_keys : key_end[g]) - 1;
    return variant.visibility_of_tile(
        tensorcore::tile_bounds{batch, one_query ? first.head : kv_head * group,
                                one_query ? last.head : kv_head * group + group - 1, first.query, last.query,
                                first_key, last_key},
        sequence);
  };

  for (int first_key = 0; first_key < task_key_end; first_key += block_keys) {
    // Groups that see none of the block's keys skip it; a block no group sees is not packed.
    tensorcore::tile_visibility kind[max_task_groups];
    bool any_shown = false;
    for (int g = 0; g < groups; ++g) {
      kind[g] = first_key < key_end[g] ? visibility(g, first_key) : tensorcore::tile_visibility::hidden;
      any_shown = any_shown || kind[g] != tensorcore::tile_visibility::hidden;
    }
    if (!any_shown) continue;
    const int valid_keys = p.key_length - first_key < block_keys ? p.key_length - first_key : block_keys;
    // K's rows, contiguous, zeros past Lk. Read in place (2 KiB apart at KVH 8, D 128): 36.9 against 35.5 ms.
    for (int key = 0; key < block_keys; ++key) {
      if (key < valid_keys) std::memcpy(k_block + key * D, k_data + (first_key + key) * p.k_strides.position, D * 2);
      else std::memset(k_block + key * D, 0, D * 2);
    }
    // Vᵀ's A tiles: tile j row d holds V[key][16j + d] for the block's 32 keys (zeros past Lk).
    for (int j = 0; j < out_tiles; j += 2) {
      u32x16 pairs[2][16];
      for (int pair = 0; pair < 16; ++pair) {
        const int a = 2 * pair, b = 2 * pair + 1;
        const u16x32 low = a < valid_keys ? load<u16x32>(v_data + (first_key + a) * p.v_strides.position + 16 * j)
                                          : u16x32{};
        const u16x32 high = b < valid_keys ? load<u16x32>(v_data + (first_key + b) * p.v_strides.position + 16 * j)
                                           : u16x32{};
        interleave(low, high, pairs[0][pair], pairs[1][pair]);
      }
      for (int half = 0; half < 2; ++half) {
        transpose(pairs[half]);
        for (int lane = 0; lane < 16; ++lane) {
          const int d = interleaved_element(lane, half);
          store(v_tiles + (j + d / 16) * tile_bytes + 64 * (d % 16), pairs[half][lane]);
        }
      }
    }

    for (int g = 0; g < groups; ++g) {
      if (kind[g] == tensorcore::tile_visibility::hidden) continue;
      // Sᵀ: tile 0 keys 0-15 x rows 0-15, 1 keys 0-15 x rows 16-31, 2 and 3 keys 16-31.
      tiles.template zero<0>();
      tiles.template zero<1>();
      tiles.template zero<2>();
      tiles.template zero<3>();
      for (int c = 0; c < chunks; ++c) {
        tiles.template load<4>(k_block + 32 * c, D * 2);
        tiles.template load<5>(k_block + 16 * D + 32 * c, D * 2);
        tiles.template load<6>(q_tile(g, c, 0), 64);
        tiles.template load<7>(q_tile(g, c, 1), 64);
        tiles.template dot<0, 4, 6>();
        tiles.template dot<1, 4, 7>();
        tiles.template dot<2, 5, 6>();
        tiles.template dot<3, 5, 7>();
      }
      tiles.template store<0>(scores, 128);
      tiles.template store<1>(scores + 16, 128);
      tiles.template store<2>(scores + 16 * group_rows, 128);
      tiles.template store<3>(scores + 16 * group_rows + 16, 128);

      // The online softmax in base 2, a row per lane. A row that has seen no key keeps its maximum at
      // -infinity and takes exponentials against 0, so hidden scores give 0, never NaN.
      const bool plain = first_key + block_keys <= plain_end[g] && kind[g] == tensorcore::tile_visibility::whole;
      for (int t = 0; t < 2; ++t) {
        f32x16 s[block_keys];
        for (int key = 0; key < block_keys; ++key) s[key] = load<f32x16>(scores + key * group_rows + 16 * t);
        // Plain blocks' dots are scaled inside the exponential.
        const float to_log2 = plain ? p.scale * log2e : 1.0f;
        if (!plain) {
          for (int key = 0; key < block_keys; ++key)
            for (int n = 0; n < 16; ++n) {
              const int slot = g * group_rows + 16 * t + n, kv = first_key + key;
              float x = -INFINITY;
              if (slot < rows_here && kv < key_end[g]) {
                const row_position r = row_of(slot);
                x = variant.score(s[key][n] * p.scale, batch, r.head, r.query, kv, sequence) * log2e;
              }
              s[key][n] = x;
            }
        }
        f32x16 block_max = s[0];
        for (int key = 1; key < block_keys; ++key) block_max = max_of(block_max, s[key]);
        block_max *= to_log2;
        // The maximum moves only when a row's grows by more than 2^8: weights stay below 256, and the
        // output is rescaled far less often (the result is the same, normalised by the same maximum).
        // Moved at every growth: 39.5 against 35.5 ms (prefill_gqa_bf16's shape, one thread).
        const f32x16 new_max = block_max > running_max[g][t] + 8.0f ? block_max : running_max[g][t];
        const f32x16 base = new_max == -INFINITY ? splat(0.0f) : new_max;
        const f32x16 rescale = exp2_of(running_max[g][t] - base);
        f32x16 block_sum = splat(0.0f);
        for (f32x16& x : s) {
          x = exp2_of(x * to_log2 - base);
          block_sum += x;
        }
        running_sum[g][t] = running_sum[g][t] * rescale + block_sum;
        running_max[g][t] = new_max;
        for (int pair = 0; pair < 16; ++pair)
          store(weights + t * tile_bytes + 64 * pair, bf16_pairs(s[2 * pair], s[2 * pair + 1]));
        if (any_lane(rescale != 1.0f))
          for (int j = 0; j < out_tiles; ++j) {
            float* o = out_tile(g, j, t);
            for (int d = 0; d < 16; ++d) store(o + 16 * d, load<f32x16>(o + 16 * d) * rescale);
          }
      }

      // Oᵀ += Vᵀ Pᵀ, 32 output dims at a time.
      tiles.template load<6>(weights, 64);
      tiles.template load<7>(weights + tile_bytes, 64);
      for (int j = 0; j < out_tiles; j += 2) {
        tiles.template load<4>(v_tiles + j * tile_bytes, 64);
        tiles.template load<5>(v_tiles + (j + 1) * tile_bytes, 64);
        tiles.template load<0>(out_tile(g, j, 0), 64);
        tiles.template load<1>(out_tile(g, j, 1), 64);
        tiles.template load<2>(out_tile(g, j + 1, 0), 64);
        tiles.template load<3>(out_tile(g, j + 1, 1), 64);
        tiles.template dot<0, 4, 6>();
        tiles.template dot<1, 4, 7>();
        tiles.template dot<2, 5, 6>();
        tiles.template dot<3, 5, 7>();
        tiles.template store<0>(out_tile(g, j, 0), 64);
        tiles.template store<1>(out_tile(g, j, 1), 64);
        tiles.template store<2>(out_tile(g, j + 1, 0), 64);
        tiles.template store<3>(out_tile(g, j + 1, 1), 64);
      }
    }
  }

  // Normalise and store. A sink's logit joins the row's maximum and denominator and attends to
  // nothing; a row that saw no key is 0, with lse its sink or -infinity.
  const float* sinks = variant.in.sinks;
  auto* out_data = static_cast<std::uint16_t*>(p.out) + batch * p.out_strides.batch;
  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < 2; ++t) {
      const int first_slot = g * group_rows + 16 * t;
      if (first_slot >= rows_here) break;
      float inverse[16], lse[16];
      for (int lane = 0; lane < 16; ++lane) {
        const float keys_max = running_max[g][t][lane];
        const float sink =
            sinks != nullptr && first_slot + lane < rows_here ? sinks[row_of(first_slot + lane).head] * log2e : -INFINITY;
        const float row_max = keys_max > sink ? keys_max : sink;
        const float base = row_max == -INFINITY ? 0.0f : row_max;
        const float keys_share = std::exp2(keys_max - base);
        const float total = running_sum[g][t][lane] * keys_share + std::exp2(sink - base);
        inverse[lane] = total > 0.0f ? keys_share / total : 0.0f;
        lse[lane] = total > 0.0f ? (row_max + std::log2(total)) * ln2 : -INFINITY;
      }
      for (int j = 0; j < out_tiles; ++j) {
        u32x16 values[16];
        for (int d = 0; d < 16; ++d) values[d] = load<u32x16>(out_tile(g, j, t) + 16 * d);
        transpose(values);
        for (int lane = 0; lane < 16 && first_slot + lane < rows_here; ++lane) {
          const row_position r = row_of(first_slot + lane);
          const f32x16 row = __builtin_bit_cast(f32x16, values[lane]) * inverse[lane];
          store(out_data + r.query * p.out_strides.position + r.head * p.out_strides.head + 16 * j, bf16_of(row));
        }
      }
      if (p.lse != nullptr)
        for (int lane = 0; lane < 16 && first_slot + lane < rows_here; ++lane) {
          const row_position r = row_of(first_slot + lane);
          p.lse[batch * p.lse_batch_stride + r.head * p.lse_head_stride + r.query] = lse[lane];
        }
    }
}

/// A worker of `call`: configures the tiles, runs tasks until none is left, releases the tiles.
template <typename Tiles, typename Variant>
void run_worker(forward_call* call, void* scratch) {
  Variant variant{};
  static_cast<tensorcore::variant_state&>(variant) = call->variant;
  Tiles tiles;
  tiles.configure();
  for (int task = __atomic_fetch_add(&call->next_task, 1, __ATOMIC_RELAXED); task < call->tasks;
       task = __atomic_fetch_add(&call->next_task, 1, __ATOMIC_RELAXED))
    forward_task<Variant::head_dim>(tiles, call->params, variant, call->task_groups, task,
                                    static_cast<unsigned char*>(scratch));
  tiles.release();
}

}  // namespace
}  // namespace attngen::amx

#pragma GCC diagnostic pop
