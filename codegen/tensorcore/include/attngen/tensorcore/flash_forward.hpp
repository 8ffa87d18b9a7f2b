#pragma once
/// FlashAttention-2's forward pass on the tensor cores, written once for the GPU and the host
/// (warp.hpp). A thread block owns 16 rows per warp; a row is one (query, head) pair, so the query
/// heads of a GQA group share every key/value tile the block stages. Each warp keeps its rows'
/// q fragments, scores, online-softmax state and output in registers (past head dim 128, its q rows
/// in shared memory, read a 16-column chunk at a time); q.kᵀ and p.V are mma.sync m16n8k16 with f32
/// accumulators, K and V reach them through ldmatrix from tiles of 64 keys (32 past head dim 128,
/// launch_shape.hpp's keys_per_tile) that the block stages in shared memory two at a time
/// (cp.async: the next tile is in flight while this one is computed).
///
/// A Variant says what the description adds to plain attention, as FlashInfer's variants do; its
/// `head_dim` and `v_head_dim` are q's and k's columns and v's and the output's, its
/// `storage` is q's and the output's element type (std::uint16_t for bf16 and f16, float for an f32
/// description on the tensor cores, rounded to E as it is read), its `cache` K's and V's
/// (launch_shape.hpp's cache_element: converted to E as it is staged where it is not E), and its
/// hooks, which take the
/// sequence of the rows (launch_shape.hpp: its lengths, and its first row in a packed batch), are:
///   float score(float scaled_score, int batch, int head, int query, int key, const sequence_extent&) const
///     the score after the description's modifiers, -infinity where a mask hides the key;
///   int key_end(int last_query, const sequence_extent&) const
///     the end of the keys any query up to that one can see (tiles past it are skipped);
///   int plain_key_end(int first_query, const sequence_extent&) const
///     the end of the keys whose score() is the scaled score itself for every query from that one
///     on, the mask modifier aside: tiles before it that the mask shows whole skip score() and the
///     masking (0 where every score needs them);
///   bool shows(int batch, int head, int query, int key, const sequence_extent&) const
///     the mask modifier at one (row, key) (true without one);
///   tile_visibility visibility_of_tile(const tile_bounds&, const sequence_extent&) const
///     what the mask modifier does over a whole tile (modifier_ranges.hpp): tiles it hides are
///     skipped, tiles it shows whole may be plain.
/// Queries and keys are the sequence's own positions; a KV-cache layout (sequence_layout) decides
/// where its rows lie.
/// score() is called on every lane with that lane's values (ATTNGEN_TC_FN). The variant's inputs
/// (variant_inputs) also carry the sinks, which the kernel itself adds at the end.

#include <cstdint>
#include <type_traits>

#include "attngen/tensorcore/launch_shape.hpp"
#include "attngen/tensorcore/memory.hpp"
#include "attngen/tensorcore/mma.hpp"
#include "attngen/tensorcore/modifier_ranges.hpp"
#include "attngen/tensorcore/split_merge.hpp"
#include "attngen/tensorcore/warp.hpp"

namespace attngen::tensorcore {

/// The cache element that is the tensor cores' own type E.
template <element16 E>
inline constexpr cache_element cache_element_of = E == element16::bf16 ? cache_element::bf16 : cache_element::f16;

/// The block's shape of a variant's kernel.
template <typename Variant>
using variant_tiles = forward_tiles<Variant::head_dim, Variant::v_head_dim, Variant::warps,
                                    converted_bytes(Variant::cache, cache_element_of<Variant::element>)>;

/// One warp's part of block (x, y, z): its 16 rows against the block's key tiles. Every warp of the
/// block calls it with the same block (the staging and barriers are the block's).
template <element16 E, int D, int W, typename Variant>
ATTNGEN_TC_FN void forward_warp(const forward_params& p, const Variant& variant, grid3 block, int warp,
                                std::uint16_t* shared) {
  using storage = typename Variant::storage;
  constexpr cache_element cache = Variant::cache;
  using cache_type = cache_storage<cache>;
  constexpr bool converts_cache = converted_bytes(cache, cache_element_of<E>) > 0;
  using tiles = variant_tiles<Variant>;
  // q and k have D columns, v and the output Dv.
  constexpr int Dv = Variant::v_head_dim;
  constexpr int n_tiles = tiles::keys / 8, d_chunks = D / 16, out_tiles = Dv / 8;
  constexpr float log2e = 1.4426950408889634f, ln2 = 0.6931471805599453f;
  const int group = p.heads / p.kv_heads;
  const block_rows shape = rows_of_block(group, tiles::rows);
  const int kv_head = block.y / shape.head_chunks;
  const int first_head_in_group = (block.y % shape.head_chunks) * shape.heads;
  const int splits = splits_of(p), split = block.x % splits;
  const int first_query = block.x / splits * shape.queries;
  const int batch = block.z;
  const sequence_extent sequence = extent_of(p, batch);
  // The grid covers the longest sequence's queries: the block's whole, barriers included, ends here.
  if (first_query >= sequence.queries) return;
  const auto* q_data = static_cast<const storage*>(p.q);
  auto* out_data = static_cast<storage*>(p.out);

  // The (query, head) pair of the warp's row `row` (0 to 15), and whether it holds one.
  struct warp_row {
    int head, query;
    bool valid;
  };
  auto row_of = [&](int row) {
    const int slot = rows_per_warp * warp + row;
    const int in_group = first_head_in_group + slot % shape.heads;
    const int q = first_query + slot / shape.heads;
    return warp_row{kv_head * group + in_group, q,
                    slot < shape.queries * shape.heads && in_group < group && q < sequence.queries};
  };
  // This lane's two rows (accumulator rows lane / 4 and lane / 4 + 8 of the warp's 16).
  const lanes<int> lane = lane_id();
  lanes<int> head[2], query[2];
  lanes<bool> row_valid[2];
  ATTNGEN_TC_UNROLL
  for (int r = 0; r < 2; ++r) {
    head[r] = each([&](int l) { return row_of((l >> 2) + 8 * r).head; }, lane);
    query[r] = each([&](int l) { return row_of((l >> 2) + 8 * r).query; }, lane);
    row_valid[r] = each([&](int l) { return row_of((l >> 2) + 8 * r).valid; }, lane);
  }

  // q's fragments: register j of chunk c holds row a_row(lane, 2j), columns 16c + a_col(lane, 2j)
  // and the next. Up to head dim 128 they are loaded once into registers; past it the warp copies
  // its 16 rows (zeros where a row holds nothing) into its own part of the shared memory, a column
  // pair a lane, and the q.k loop reads each chunk from there by ldmatrix.
  auto q_address = [&](int h, int q, int column) {
    return q_data + query_row_offset(p.q_strides, batch, sequence, q) + h * p.q_strides.head + column;
  };
  a_fragment q_fragment[tiles::q_in_shared ? 1 : d_chunks];
  std::uint16_t* const q_rows = tiles::q_in_shared ? shared + tiles::q_rows_of_warp(warp) : nullptr;
  if constexpr (tiles::q_in_shared) {
    for (int row = 0; row < rows_per_warp; ++row) {
      const warp_row of = row_of(row);
      ATTNGEN_TC_UNROLL
      for (int column = 0; column < D; column += 2 * warp_lanes) {
        const lanes<bool> in_row = each([&](int l) { return column + 2 * l < D; }, lane);
        const lanes<bool> valid = each([&](bool in) { return in && of.valid; }, in_row);
        const lanes<const storage*> address =
            each([&](int l) { return q_address(of.head, of.query, column + 2 * l); }, lane);
        const lanes<std::uint16_t*> to =
            each([&](int l) { return q_rows + row * tiles::k_row_stride + column + 2 * l; }, lane);
        store_where(to, load_packed<E>(address, valid), in_row);
      }
    }
    warp_barrier();
  } else {
    ATTNGEN_TC_UNROLL
    for (int c = 0; c < d_chunks; ++c)
      ATTNGEN_TC_UNROLL
      for (int j = 0; j < 4; ++j) {
        const int r = j & 1;
        const lanes<const storage*> address = each(
            [&](int l, int h, int q) { return q_address(h, q, 16 * c + a_col(l, 2 * j)); }, lane, head[r], query[r]);
        q_fragment[c].reg[j] = load_packed<E>(address, row_valid[r]);
      }
  }
  // Chunk c's fragment; from shared memory, matrix m of the x4 is rows 8 (m % 2) onwards, columns
  // 16 c + 8 (m / 2) onwards.
  auto q_chunk = [&](int c) {
    if constexpr (tiles::q_in_shared) {
      const lanes<const std::uint16_t*> rows = each(
          [&](int l) -> const std::uint16_t* {
            return q_rows + ((l & 7) + 8 * ((l >> 3) & 1)) * tiles::k_row_stride + 16 * c + 8 * (l >> 4);
          },
          lane);
      a_fragment fragment;
      ldmatrix_x4<false>(fragment.reg, rows);
      return fragment;
    } else {
      return q_fragment[c];
    }
  };

  c_fragment out[out_tiles];
  ATTNGEN_TC_UNROLL
  for (c_fragment& o : out)
    ATTNGEN_TC_UNROLL
    for (lanes<float>& x : o.x) x = 0.0f;
  lanes<float> running_max[2] = {-INFINITY, -INFINITY}, running_sum[2] = {0.0f, 0.0f};

  const block_extent rows = extent_of_block(p, tiles::rows, block, sequence);
  const int last_query = rows.last_query;
  const int variant_key_end = variant.key_end(last_query, sequence);
  const int key_end = variant_key_end < sequence.keys ? variant_key_end : sequence.keys;
  // This block's tiles: its split's share of the sequence's, up to key_end.
  const int key_tiles = key_end > 0 ? (key_end + tiles::keys - 1) / tiles::keys : 0;
  const split_tiles share = tiles_of_split((sequence.keys + tiles::keys - 1) / tiles::keys, splits, split);
  const int end_tile = share.end < key_tiles ? share.end : key_tiles;
  // Tiles of keys before plain_end take their dots as they come, scaled inside the exponential
  // (the maximum of the dots is the scaled maximum when the scale is positive).
  const int variant_plain_end = p.scale > 0.0f ? variant.plain_key_end(first_query, sequence) : 0;
  const int plain_end = variant_plain_end < key_end ? variant_plain_end : key_end;
  const float plain_to_log2 = p.scale * log2e;

  // The block's rows and a tile's keys as ranges for the mask modifier: the same for every warp, so
  // every warp skips the same tiles.
  auto visibility = [&](int tile) {
    const int first_key = tile * tiles::keys;
    const int last_key = (first_key + tiles::keys < key_end ? first_key + tiles::keys : key_end) - 1;
    return variant.visibility_of_tile(
        tile_bounds{batch, rows.first_head, rows.last_head, first_query, last_query, first_key, last_key}, sequence);
  };
  // The first tile from `tile` on that the mask does not hide from every row of the block, and what
  // the mask does to it (end_tile when none is left).
  struct shown_tile {
    int tile;
    tile_visibility kind;
  };
  auto next_shown = [&](int tile) {
    for (; tile < end_tile; ++tile)
      if (const tile_visibility kind = visibility(tile); kind != tile_visibility::hidden) return shown_tile{tile, kind};
    return shown_tile{end_tile, tile_visibility::hidden};
  };

  const cache_type* k_head = static_cast<const cache_type*>(p.k) + kv_head * p.k_strides.head;
  const cache_type* v_head = static_cast<const cache_type*>(p.v) + kv_head * p.v_strides.head;
  // A cache of E's own type: the n-th tile computed has its K, then V, in stage n % stages of the
  // shared memory, copied by cp.async while the tile before is computed. Other caches: the next
  // tile's rows are copied as they are into a staging area behind the one 16-bit stage while this
  // tile is computed, then converted into the stage.
  auto k_tile_of = [&](int step) { return shared + (step % tiles::stages) * tiles::stage_elements; };
  cache_type* const raw_staging = reinterpret_cast<cache_type*>(shared + tiles::stage_elements);
  auto stage_tile = [&](int step, int valid, const auto& k_row, const auto& v_row) {
    if constexpr (converts_cache) {
      stage_raw_rows(raw_staging, k_row, tiles::keys, D, valid);
      stage_raw_rows(raw_staging + tiles::keys * D, v_row, tiles::keys, Dv, valid);
    } else {
      std::uint16_t* k_tile = k_tile_of(step);
      stage_rows(k_tile, tiles::k_row_stride, k_row, tiles::keys, D, valid);
      stage_rows(k_tile + tiles::k_tile_elements, tiles::v_row_stride, v_row, tiles::keys, Dv, valid);
    }
  };
  auto stage = [&](int tile, int step) {
    const int first_key = tile * tiles::keys;
    const int valid = sequence.keys - first_key;
    if (p.layout.page_table == nullptr) {
      // Rows one stride apart: the tile's first row once, not a lookup per row (this took the dense
      // bf16 prefill from 0.483 to 0.347 ms on an H200: 41% more instructions per tile before).
      const cache_type* k_first = k_head + key_row_offset(p, p.k_strides, batch, first_key);
      const cache_type* v_first = v_head + key_row_offset(p, p.v_strides, batch, first_key);
      const std::int64_t k_stride = p.k_strides.position, v_stride = p.v_strides.position;
      stage_tile(step, valid, [=](int row) { return k_first + row * k_stride; },
                 [=](int row) { return v_first + row * v_stride; });
    } else {
      stage_tile(step, valid, [&](int row) { return k_head + key_row_offset(p, p.k_strides, batch, first_key + row); },
                 [&](int row) { return v_head + key_row_offset(p, p.v_strides, batch, first_key + row); });
    }
    commit_staging();
  };
  shown_tile current = next_shown(share.begin);
  if (current.tile < end_tile) stage(current.tile, 0);

  for (int step = 0; current.tile < end_tile; ++step) {
    const int tile = current.tile;
    const shown_tile next = next_shown(tile + 1);
    const int next_tile = next.tile;
    if constexpr (converts_cache) {
      wait_for_staging<0>();
      block_barrier();
      // An int8 row's scale (0 past the sequence's keys, whose rows are zeros).
      const int valid = sequence.keys - tile * tiles::keys;
      const auto scale_of = [&](const float* scales, const sequence_strides& strides) {
        return [&, scales](int row) {
          return row < valid ? scales[key_row_offset(p, strides, batch, tile * tiles::keys + row) + kv_head * strides.head]
                             : 0.0f;
        };
      };
      convert_staged_rows<E, cache>(shared, tiles::k_row_stride, raw_staging, tiles::keys, D,
                                    scale_of(p.k_scale, p.k_scale_strides));
      convert_staged_rows<E, cache>(shared + tiles::k_tile_elements, tiles::v_row_stride,
                                    raw_staging + tiles::keys * D, tiles::keys, Dv,
                                    scale_of(p.v_scale, p.v_scale_strides));
      block_barrier();
      if (next_tile < end_tile) stage(next_tile, step + 1);
    } else {
      if (next_tile < end_tile) {
        stage(next_tile, step + 1);
        wait_for_staging<1>();
      } else {
        wait_for_staging<0>();
      }
      block_barrier();
    }
    const std::uint16_t* k_tile = k_tile_of(step);
    const std::uint16_t* v_tile = k_tile + tiles::k_tile_elements;
    const int first_key = tile * tiles::keys;

    // Scores: K rows are B's columns, so plain ldmatrix gives B's fragments; matrix m of each x4 is
    // keys 8 (n + m / 2) onwards, columns 16 c + 8 (m % 2) onwards.
    c_fragment score[n_tiles];
    ATTNGEN_TC_UNROLL
    for (c_fragment& s : score)
      ATTNGEN_TC_UNROLL
      for (lanes<float>& x : s.x) x = 0.0f;
    ATTNGEN_TC_UNROLL
    for (int c = 0; c < d_chunks; ++c) {
      const a_fragment q_chunk_fragment = q_chunk(c);
      ATTNGEN_TC_UNROLL
      for (int n = 0; n < n_tiles; n += 2) {
        const lanes<const std::uint16_t*> rows = each(
            [&](int l) {
              return k_tile + (8 * n + 8 * (l >> 4) + (l & 7)) * tiles::k_row_stride + 16 * c + 8 * ((l >> 3) & 1);
            },
            lane);
        lanes<std::uint32_t> reg[4];
        ldmatrix_x4<false>(reg, rows);
        mma_m16n8k16<E>(score[n], q_chunk_fragment, b_fragment{{reg[0], reg[1]}});
        mma_m16n8k16<E>(score[n + 1], q_chunk_fragment, b_fragment{{reg[2], reg[3]}});
      }
    }

    // The description's scores and masks (keys past Lk and rows holding nothing are hidden), then the
    // online softmax in base 2, its maximum kept in base 2 too; a row that has seen no key yet keeps
    // its maximum at -infinity and takes exponentials against 0, so hidden scores give 0, never NaN.
    // A plain tile's dots need no masking (its rows that hold nothing are never stored) and are
    // scaled inside the exponential. Each kind of tile is straight-line code of its own: one body
    // that branches on the kind takes more registers (it spilled at D 32).
    auto softmax_of_tile = [&](auto plain_tile) {
      constexpr bool plain = decltype(plain_tile)::value;
      if constexpr (!plain) {
        ATTNGEN_TC_UNROLL
        for (int n = 0; n < n_tiles; ++n)
          ATTNGEN_TC_UNROLL
          for (int i = 0; i < 4; ++i) {
            const int r = i >> 1;
            score[n].x[i] = each(
                [&](float dot, int l, int h, int q, bool valid) {
                  const int key = first_key + 8 * n + c_col(l, i);
                  if (!valid || key >= key_end) return -INFINITY;
                  return variant.score(dot * p.scale, batch, h, q, key, sequence);
                },
                score[n].x[i], lane, head[r], query[r], row_valid[r]);
          }
      }
      const lanes<float> to_log2 = plain ? plain_to_log2 : log2e;
      ATTNGEN_TC_UNROLL
      for (int r = 0; r < 2; ++r) {
        lanes<float> tile_max = -INFINITY;
        ATTNGEN_TC_UNROLL
        for (int n = 0; n < n_tiles; ++n)
          tile_max = max_of(tile_max, max_of(score[n].x[2 * r], score[n].x[2 * r + 1]));
        const lanes<float> new_max = max_of(running_max[r], quad_max(tile_max) * to_log2);
        const lanes<float> minus_base = each([](float m) { return m == -INFINITY ? 0.0f : -m; }, new_max);
        const lanes<float> rescale = exp2_of(running_max[r] + minus_base);
        lanes<float> tile_sum = 0.0f;
        ATTNGEN_TC_UNROLL
        for (int n = 0; n < n_tiles; ++n)
          ATTNGEN_TC_UNROLL
          for (int i = 2 * r; i < 2 * r + 2; ++i) {
            score[n].x[i] = exp2_of(fma_of(score[n].x[i], to_log2, minus_base));
            tile_sum = tile_sum + score[n].x[i];
          }
        running_sum[r] = running_sum[r] * rescale + tile_sum;
        running_max[r] = new_max;
        ATTNGEN_TC_UNROLL
        for (c_fragment& o : out)
          ATTNGEN_TC_UNROLL
          for (int i = 2 * r; i < 2 * r + 2; ++i) o.x[i] = o.x[i] * rescale;
      }
    };
    if (first_key + tiles::keys <= plain_end && current.kind == tile_visibility::whole)
      softmax_of_tile(std::true_type{});
    else
      softmax_of_tile(std::false_type{});

    // p.V: two adjacent score tiles are one A fragment as they stand; V rows are B's k, so
    // ldmatrix.trans gives B's fragments: matrix m of each x4 is keys 16 j + 8 (m % 2) onwards,
    // features 8 (f + m / 2) onwards.
    ATTNGEN_TC_UNROLL
    for (int j = 0; j < n_tiles / 2; ++j) {
      const a_fragment weights{{pack2<E>(score[2 * j].x[0], score[2 * j].x[1]),
                                pack2<E>(score[2 * j].x[2], score[2 * j].x[3]),
                                pack2<E>(score[2 * j + 1].x[0], score[2 * j + 1].x[1]),
                                pack2<E>(score[2 * j + 1].x[2], score[2 * j + 1].x[3])}};
      ATTNGEN_TC_UNROLL
      for (int f = 0; f < out_tiles; f += 2) {
        const lanes<const std::uint16_t*> rows = each(
            [&](int l) {
              return v_tile + (16 * j + 8 * ((l >> 3) & 1) + (l & 7)) * tiles::v_row_stride + 8 * (f + (l >> 4));
            },
            lane);
        lanes<std::uint32_t> reg[4];
        ldmatrix_x4<true>(reg, rows);
        mma_m16n8k16<E>(out[f], weights, b_fragment{{reg[0], reg[1]}});
        mma_m16n8k16<E>(out[f + 1], weights, b_fragment{{reg[2], reg[3]}});
      }
    }
    block_barrier();
    current = next;
  }

  // A split's rows: its output normalised over its keys and their log-sum-exp (0 and -infinity where
  // it saw none), for the merge, which adds the sinks.
  if (splits > 1) {
    ATTNGEN_TC_UNROLL
    for (int r = 0; r < 2; ++r) {
      const lanes<float> total = quad_sum(running_sum[r]);
      const lanes<float> inverse = each([](float t) { return t > 0.0f ? 1.0f / t : 0.0f; }, total);
      ATTNGEN_TC_UNROLL
      for (int f = 0; f < out_tiles; ++f) {
        const lanes<float*> address = each(
            [&](int l, int h, int q) { return p.partial + split_row(p, split, batch, h, q) * Dv + 8 * f + c_col(l, 0); },
            lane, head[r], query[r]);
        store_pair<E, float>(address, out[f].x[2 * r] * inverse, out[f].x[2 * r + 1] * inverse, row_valid[r]);
      }
      const lanes<float> lse = each(
          [](float m, float t) { return t > 0.0f ? (m + log2f(t)) * ln2 : -INFINITY; }, running_max[r], total);
      const lanes<float*> address = each(
          [&](int h, int q) { return p.partial + split_rows(p) * Dv + split_row(p, split, batch, h, q); }, head[r],
          query[r]);
      const lanes<bool> writes = each([](int l, bool valid) { return valid && (l & 3) == 0; }, lane, row_valid[r]);
      store_where(address, lse, writes);
    }
    return;
  }

  // Normalise and store. A sink's logit (variant_inputs::sinks) joins the row's maximum and
  // denominator and attends to nothing; a row that saw no key is 0, with lse its sink or -infinity.
  const float* sinks = variant.in.sinks;
  ATTNGEN_TC_UNROLL
  for (int r = 0; r < 2; ++r) {
    const lanes<float> sink = each(
        [&](int h, bool valid) { return sinks != nullptr && valid ? sinks[h] * log2e : -INFINITY; }, head[r],
        row_valid[r]);
    const lanes<float> row_max = max_of(running_max[r], sink);
    const lanes<float> minus_base = each([](float m) { return m == -INFINITY ? 0.0f : -m; }, row_max);
    // The keys' share of the denominator, rescaled to the row's maximum (0 where no key was seen).
    const lanes<float> keys_share = exp2_of(running_max[r] + minus_base);
    const lanes<float> total = quad_sum(running_sum[r]) * keys_share + exp2_of(sink + minus_base);
    const lanes<float> inverse = each([](float k, float t) { return t > 0.0f ? k / t : 0.0f; }, keys_share, total);
    ATTNGEN_TC_UNROLL
    for (int f = 0; f < out_tiles; ++f) {
      const lanes<storage*> address = each(
          [&](int l, int h, int q) {
            return out_data + query_row_offset(p.out_strides, batch, sequence, q) + h * p.out_strides.head + 8 * f +
                   c_col(l, 0);
          },
          lane, head[r], query[r]);
      store_pair<E>(address, out[f].x[2 * r] * inverse, out[f].x[2 * r + 1] * inverse, row_valid[r]);
    }
    if (p.lse != nullptr) {
      const lanes<float> lse = each(
          [](float m, float t) { return t > 0.0f ? (m + log2f(t)) * ln2 : -INFINITY; }, row_max, total);
      const lanes<float*> address = each(
          [&](int h, int q) { return p.lse + batch * p.lse_batch_stride + h * p.lse_head_stride + sequence.first_row + q; },
          head[r],
          query[r]);
      const lanes<bool> writes = each([](int l, bool valid) { return valid && (l & 3) == 0; }, lane, row_valid[r]);
      store_where(address, lse, writes);
    }
  }
}

#if defined(__CUDACC__)
/// A kernel's body: grid forward_grid(p, variant_tiles<Variant>::rows), W * 32 threads and
/// variant_tiles<Variant>::shared_bytes of dynamic shared memory; each warp of each block runs
/// forward_warp.
template <element16 E, int D, int W, typename Variant>
__device__ __forceinline__ void forward_block(const forward_params& p, const Variant& variant) {
  extern __shared__ __align__(16) std::uint16_t shared[];
  forward_warp<E, D, W>(p, variant, grid3{int(blockIdx.x), int(blockIdx.y), int(blockIdx.z)}, int(threadIdx.x) / 32,
                        shared);
}
#else
/// The kernel's work on the host, block after block and warp after warp, through the host
/// implementations of the warp's instructions: what the tests check the tile code with.
template <element16 E, int D, int W, typename Variant>
void run_forward_on_host(const forward_params& p, const Variant& variant) {
  using tiles = variant_tiles<Variant>;
  const grid3 grid = forward_grid(p, tiles::rows);
  alignas(16) static thread_local std::uint16_t shared[tiles::shared_bytes / sizeof(std::uint16_t)];
  for (int z = 0; z < grid.z; ++z)
    for (int y = 0; y < grid.y; ++y)
      for (int x = 0; x < grid.x; ++x)
        for (int warp = 0; warp < W; ++warp) forward_warp<E, D, W>(p, variant, grid3{x, y, z}, warp, shared);
}
#endif

}  // namespace attngen::tensorcore
