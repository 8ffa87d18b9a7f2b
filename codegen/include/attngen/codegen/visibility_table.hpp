#pragma once
/// The run-time visibility table of a mask modifier that reads captured tensors or scalars: for each
/// (key block, query tile, kv head, batch) of a grid, whether the modifier shows some key of the
/// block to some row of the tile, and whether it hides some (visibility_bits). Kernels skip the
/// blocks no row sees and apply the modifier only to the blocks it partly hides. (Masks of positions
/// alone are bounded at build time instead, see define_attention.)
///
/// On CPUs the table is a part of the kernel of its own (<name>_halide_visibility), run before the
/// variant: it evaluates the mask once per call on the finest tiles and blocks of the kernel's
/// targets (every target's are whole multiples of them), and the runtime ors that table into one
/// slice per target on the target's own tiles (attngen/runtime/detail/visibility_slices.hpp), so the variant
/// reads one entry per block whichever target runs. Generated once per target rather than inside
/// each variant, it saves about 0.25 s of generation per target with four variants. GPU kernels
/// compute the table on their own tiles.

#include <cstdint>
#include <vector>

#include "Halide.h"
#include "attngen/attention.hpp"
#include "attngen/codegen/modifiers.hpp"
#include "attngen/runtime/detail/visibility_slices.hpp"

namespace attngen::codegen {

/// Bits of a block's visibility: what the mask modifier does to the keys of one key block for the rows
/// of one query tile.
enum visibility_bits : uint8_t { some_key_visible = 1, some_key_hidden = 2 };

/// The CPU part's name in generated symbols and files (see halide_function_name).
inline constexpr const char* visibility_part_name = "visibility";

/// Whether `desc`'s mask modifier reads captures, so that what it shows is known at run time only.
bool needs_visibility_table(const attention_desc& desc);

/// Kv heads the table tells apart: the description's where the mask reads the head, else 1.
int visibility_table_heads(const attention_desc& desc);

/// The table's stages over a grid of `tile_queries` x `block_keys`.
struct visibility_stages {
  Halide::Var kb{"kb"}, it{"it"}, g{"g"}, b{"b"}, lane{"lane"};
  /// (kb, it, g, b): visibility bits of key block kb for query tile `it`; g ranges over
  /// visibility_table_heads. Keys past Lk and rows past Lq count as neither visible nor hidden.
  Halide::Func table;
  /// (lane, kb, it, g, b): the bits of the keys in vector lane `lane` of the block's key vectors.
  Halide::Func lanes;
};

/// Where the table's stages read their sizes and the mask's captures.
struct visibility_inputs {
  Halide::Expr tile_queries, block_keys;  ///< the grid
  Halide::Expr query_length, key_length;
  /// Zero in every call, in a form Halide cannot prove zero (see attention_sources::unproven_zero).
  Halide::Expr unproven_zero;
  int lanes = 16;  ///< keys per vector
  /// The mask's leaves at query 0 and key 0 of the call, whose positions and lengths (global positions)
  /// place every other query and key; undefined: the call is the whole sequence.
  modifier_leaves origin;
};

/// The table's stages for `desc`'s mask modifier (needs_visibility_table), reading `captures`: every
/// (row, key) of every block, each tile's rows innermost, so that a key vector's reads serve them all.
visibility_stages define_visibility_stages(const attention_desc& desc, const capture_params& captures,
                                           const visibility_inputs& inputs);

/// Queries per tile and keys per block.
struct visibility_grid {
  int queries = 0, keys = 0;
};

/// The CPU part that computes the table on a grid given at run time.
struct visibility_table_algorithm {
  capture_params captures;
  Halide::Param<int32_t> query_length{"query_length"}, key_length{"key_length"};
  Halide::Param<int32_t> tile_queries{"tile_queries"}, block_keys{"block_keys"};
  Halide::ImageParam positions;  ///< (4) int32, with global positions (attngen/arguments.hpp)
  visibility_stages stages;  ///< stages.table is the output: uint8 (B, heads, tiles, blocks)

  /// In order: the arguments of the kernel it reads (attngen::read_by_visibility_table: the positions,
  /// the captures), then query_length, key_length, tile_queries, block_keys.
  std::vector<Halide::Argument> arguments() const;
};

/// One variant's visibility table in a kernel: the finest of its tiles over the CPU targets, on which
/// the part computes the table, and each target's tiles in units of them, which the runtime's slices
/// take (attngen/runtime/detail/visibility_slices.hpp).
struct visibility_layout {
  visibility_grid finest;
  std::vector<detail::visibility_ratio> ratios;  ///< one per target, in the kernel's order
};

/// The layout of a variant whose tiles on the kernel's CPU targets are `target_tiles`. Throws
/// std::logic_error where one target's tiles or blocks are not a whole multiple of another's.
visibility_layout visibility_table_layout(const std::vector<visibility_grid>& target_tiles);

/// The table's part for `desc` (needs_visibility_table) with `lanes` keys per vector.
visibility_table_algorithm define_visibility_table(const attention_desc& desc, int lanes);

}  // namespace attngen::codegen
