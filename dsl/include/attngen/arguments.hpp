#pragma once
/// The run-time arguments of an attention kernel, derived from its description: one list, in the
/// generated function's order, read by the Halide pipeline (its parameters), the generated wrapper
/// (its calls and its typed `run`), the runtime (validation and buffer attachment), the C API's
/// contract, the MLIR export and the tests. A new argument is one entry in `argument_table` (and
/// its member in attngen::attention_args); nothing else counts positions.
///
/// The table lists every slot a call has, taken or not, so validation can also name a tensor given
/// for a slot the description does not take. `kernel_arguments(desc)` is the taken ones.

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string_view>

#include "attngen/attention.hpp"

namespace attngen {

/// What the kernel does with an argument.
enum class argument_role : std::uint8_t {
  input,     ///< read
  output,    ///< written
  gradient,  ///< written: the gradient of a loss with respect to an input (backward kernels)
};

/// The members of attngen::attention_args, one per slot of the table.
enum class argument_slot : std::uint8_t {
  q, q_offsets, k, v, k_scale, v_scale, page_table, kv_lengths, positions, sinks, mask, key_padding, capture, scalars, output, lse
};

/// The members of attngen::attention_backward_args, one per slot of backward_argument_table.
enum class backward_slot : std::uint8_t {
  q, k, v, sinks, mask, key_padding, capture, scalars, output, lse, d_output, dq, dk, dv, d_sinks, d_capture, d_scalars
};

/// Where a dimension's extent comes from.
enum class extent_source : std::uint8_t {
  batch,         ///< B, a run-time extent
  query_length,  ///< Lq, a run-time extent
  key_length,    ///< Lk, a run-time extent
  total_queries, ///< total_q, the packed queries of every sequence (ragged queries)
  pages,         ///< num_pages of a paged KV cache's pools
  max_pages,     ///< pages a page table's row holds
  query_total,   ///< the whole sequence's queries (global positions): positions' query_total
  key_total,     ///< the whole sequence's keys (global positions): positions' key_total
  description,   ///< fixed by the description: `extent`
};
/// How many run-time extent sources there are (those before extent_source::description).
inline constexpr int run_time_extent_count = int(extent_source::description);

/// One dimension of an argument. A run-time extent is set by the first argument in the table that
/// has it as a dimension of its own (q sets B and Lq, k sets Lk); the others must agree with that one.
struct argument_dim {
  std::string_view symbol;  ///< in shape contracts: "B", "Lq", "H", "D", ...
  std::string_view label;   ///< in messages: "batch", "kv heads", "head_dim", ...
  extent_source source = extent_source::description;
  int extent = 0;           ///< with extent_source::description
  bool is_count = false;    ///< messages read "8 kv heads" rather than "head_dim 128"
  /// With a run-time source: the extent is scale x the run-time extent + offset (a module's
  /// (B x heads) mask rows, its S + appended keys weights columns).
  int scale = 1, offset = 0;

  /// Whether the extent is the run-time one itself, which this dimension can then set.
  constexpr bool is_run_time_extent() const {
    return source != extent_source::description && scale == 1 && offset == 0;
  }
};

/// One slot of a kernel's call; `Slot` names the member of the call's arguments struct it is.
template <typename Slot>
struct argument {
  static constexpr int max_rank = 4;

  Slot slot{};
  int index = 0;             ///< the capture's declaration index (argument_slot::capture)
  std::string_view name;     ///< in messages and as the pipeline's parameter: "q", a capture's name
  argument_role role = argument_role::input;
  dtype type = dtype::f32;
  int rank = 0;
  argument_dim dims[max_rank] = {};  ///< outermost first
  bool taken = true;         ///< whether this description takes it
  bool optional = false;     ///< whether some description leaves it out
  std::string_view feature;  ///< of an optional slot: what a description adds to take it
  /// Read by the runtime too, to split the call into sequences: in host memory even for a call on a GPU.
  bool host_only = false;
  /// May span more than 2^31 elements (a KV cache's pools): the kernel addresses it with 64 bits.
  bool large = false;

  constexpr bool is_output() const { return role != argument_role::input; }
};

/// An argument of an attention operator's call (attngen::attention_args).
using kernel_argument = argument<argument_slot>;

/// The entries of a call's `positions` (attention_desc::with_global_positions), in order.
enum class global_position : std::uint8_t { query_start, key_start, query_total, key_total };
inline constexpr int global_position_count = 4;

/// An ordered list of arguments (at most N), iterable.
template <typename Slot, int N>
struct argument_list {
  argument<Slot> items[N] = {};
  int count = 0;

  constexpr const argument<Slot>* begin() const { return items; }
  constexpr const argument<Slot>* end() const { return items + count; }
  constexpr int size() const { return count; }
  constexpr const argument<Slot>& operator[](int n) const { return items[n]; }
  constexpr void push_back(const argument<Slot>& a) { items[count++] = a; }
  /// The taken ones, in order.
  constexpr argument_list taken() const {
    argument_list list;
    for (const argument<Slot>& a : *this)
      if (a.taken) list.push_back(a);
    return list;
  }
  /// Position of the first output.
  constexpr int first_output() const {
    int n = 0;
    while (n < count && !items[n].is_output()) ++n;
    return n;
  }
};

/// Every slot of an attention call: one per argument_slot, the captures' one per captured tensor
/// (argument_table past this capacity does not compile).
inline constexpr int attention_slot_count = 15 + capture_table::max_tensors;
using attention_argument_table = argument_list<argument_slot, attention_slot_count>;

namespace detail {

inline constexpr argument_dim batch_dim{"B", "batch", extent_source::batch};
inline constexpr argument_dim query_length_dim{"Lq", "Lq", extent_source::query_length};
inline constexpr argument_dim key_length_dim{"Lk", "Lk", extent_source::key_length};
inline constexpr argument_dim total_queries_dim{"total_q", "total_q", extent_source::total_queries};
inline constexpr argument_dim query_total_dim{"query_total", "query_total", extent_source::query_total};
inline constexpr argument_dim key_total_dim{"key_total", "key_total", extent_source::key_total};
constexpr argument_dim heads_dim(int h) { return {"H", "heads", extent_source::description, h, true}; }

/// The key dimension of tensors indexed by a sequence's keys (masks, key padding, captures): Lk, or
/// with a paged cache the keys a page table's row holds, max_pages x page_size.
constexpr argument_dim key_capacity_dim(const attention_desc& d) {
  if (!d.is_paged()) return key_length_dim;
  return {"Lk", "Lk (max_pages x page_size)", extent_source::max_pages, 0, false, d.kv_page_size, 0};
}
/// The query dimension of tensors indexed by queries (masks): Lq, or the packed total_q.
constexpr argument_dim query_dim(const attention_desc& d) { return d.is_ragged() ? total_queries_dim : query_length_dim; }

template <typename Slot>
constexpr argument<Slot> make_argument(Slot slot, std::string_view name, argument_role role, dtype type,
                                       std::initializer_list<argument_dim> dims, bool taken = true,
                                       std::string_view feature = {}) {
  argument<Slot> a;
  a.slot = slot;
  a.name = name;
  a.role = role;
  a.type = type;
  for (const argument_dim& d : dims) a.dims[a.rank++] = d;
  a.taken = taken;
  a.optional = !feature.empty();
  a.feature = feature;
  return a;
}

// A gradient's slot and name beside the input it is the gradient of.
struct gradient_of {
  argument_slot from;
  backward_slot slot;
  std::string_view name;
};

struct cache_tensor {
  argument_slot slot;
  std::string_view name;
  argument_dim feature;
};
struct cache_scale {
  argument_slot slot;
  std::string_view name;
};

/// The dimensions of the additive mask of `d`: its shape's, its rows the packed queries when ragged
/// and its keys a paged cache's capacity.
constexpr void add_mask_dims(kernel_argument& a, const attention_desc& d) {
  const argument_dim one{"1", "heads (broadcast)", extent_source::description, 1, true};
  const argument_dim queries = query_dim(d), keys = key_capacity_dim(d);
  switch (d.additive_mask_shape) {
    case mask_shape::lq_lk: a.dims[0] = queries; a.dims[1] = keys; a.rank = 2; return;
    case mask_shape::h_lq_lk:
      a.dims[0] = heads_dim(d.num_heads); a.dims[1] = queries; a.dims[2] = keys; a.rank = 3; return;
    case mask_shape::b_h_lq_lk:
    case mask_shape::b_1_lq_lk:
      a.dims[0] = batch_dim;
      a.dims[1] = d.additive_mask_shape == mask_shape::b_h_lq_lk ? heads_dim(d.num_heads) : one;
      a.dims[2] = queries;
      a.dims[3] = keys;
      a.rank = 4;
      return;
    case mask_shape::none: a.rank = 0; return;
  }
}

inline constexpr std::string_view capture_slot_names[] = {"captures[0]", "captures[1]", "captures[2]", "captures[3]"};
static_assert(sizeof capture_slot_names / sizeof capture_slot_names[0] == capture_table::max_tensors);

/// Captured tensor n's slot: named and shaped as declared, or by its index where none is declared.
constexpr kernel_argument capture_argument(const attention_desc& d, int n) {
  const capture_table& c = d.captures;
  kernel_argument a = make_argument(argument_slot::capture, capture_slot_names[n], argument_role::input, dtype::f32,
                                    {}, n < c.tensor_count, "captured tensor in this slot");
  a.index = n;
  if (!a.taken) return a;
  const tensor_capture& declared = c.tensors[n];
  a.name = declared.name.view();
  a.type = declared.type == capture_type::i32 ? dtype::i32 : dtype::f32;
  for (int k = 0; k < declared.rank; ++k) {
    const extent e = declared.extents[k];
    switch (e.kind) {
      case extent_kind::batch: a.dims[k] = batch_dim; break;
      case extent_kind::heads: a.dims[k] = heads_dim(d.num_heads); break;
      case extent_kind::query_length: a.dims[k] = d.global_positions ? query_total_dim : query_length_dim; break;
      case extent_kind::key_length: a.dims[k] = d.global_positions ? key_total_dim : key_capacity_dim(d); break;
      case extent_kind::fixed: a.dims[k] = {"n", "declared extent", extent_source::description, e.size}; break;
    }
  }
  a.rank = declared.rank;
  return a;
}

}  // namespace detail

/// Every slot of a call of `d`'s kernel, in the generated function's order: q, [q_offsets], k, v,
/// [k_scale, v_scale], [page_table], [kv_lengths], [positions], [sinks], [mask], [key_padding], [captured tensors],
/// [captured scalars], then the outputs output, [lse]. Captured scalars reach the kernel as one float32
/// vector (attention_args::scalars).
constexpr attention_argument_table argument_table(const attention_desc& d) {
  using detail::batch_dim, detail::query_length_dim, detail::key_length_dim, detail::heads_dim, detail::make_argument;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  const argument_dim head_dim{"D", "head_dim", extent_source::description, D};
  const argument_dim v_head_dim{"Dv", "v head_dim", extent_source::description, Dv};
  const argument_dim kv_heads{"KVH", "kv heads", extent_source::description, KVH, true};
  const argument_dim pages{"num_pages", "pages", extent_source::pages, 0, true};
  const argument_dim page_size{"page_size", "page_size", extent_source::description, d.kv_page_size};
  const argument_dim max_pages{"max_pages", "pages per sequence", extent_source::max_pages, 0, true};
  const argument_dim sequences_plus_one{"B + 1", "offsets (batch + 1)", extent_source::batch, 0, true, 1, 1};
  const argument_dim queries = detail::query_dim(d);
  // A token's place in the cache: (B, Lk) dense, (num_pages, page_size) paged.
  const argument_dim token_outer = d.is_paged() ? pages : batch_dim;
  const argument_dim token_inner = d.is_paged() ? page_size : key_length_dim;
  const dtype element = d.element_type, kv_element = d.effective_kv_element();
  attention_argument_table t;
  if (d.is_ragged())
    t.push_back(make_argument(argument_slot::q, "q", argument_role::input, element, {queries, heads_dim(H), head_dim}));
  else
    t.push_back(make_argument(argument_slot::q, "q", argument_role::input, element,
                              {batch_dim, query_length_dim, heads_dim(H), head_dim}));
  kernel_argument offsets = make_argument(argument_slot::q_offsets, "q_offsets", argument_role::input, dtype::i32,
                                          {sequences_plus_one}, d.is_ragged(), "ragged queries");
  offsets.host_only = true;
  t.push_back(offsets);
  for (const auto& [slot, name, feature_dim] : {detail::cache_tensor{argument_slot::k, "k", head_dim},
                                                detail::cache_tensor{argument_slot::v, "v", v_head_dim}}) {
    kernel_argument pool = make_argument(slot, name, argument_role::input, kv_element,
                                         {token_outer, token_inner, kv_heads, feature_dim});
    pool.large = d.is_paged();
    t.push_back(pool);
  }
  for (const auto& [slot, name] : {detail::cache_scale{argument_slot::k_scale, "k_scale"},
                                   detail::cache_scale{argument_slot::v_scale, "v_scale"}}) {
    kernel_argument scales = make_argument(slot, name, argument_role::input, dtype::f32,
                                           {token_outer, token_inner, kv_heads}, d.has_kv_scales(),
                                           "int8 keys and values");
    scales.large = d.is_paged();
    t.push_back(scales);
  }
  kernel_argument table = make_argument(argument_slot::page_table, "page_table", argument_role::input, dtype::i32,
                                        {batch_dim, max_pages}, d.is_paged(), "paged KV cache");
  table.host_only = true;
  t.push_back(table);
  kernel_argument lengths = make_argument(argument_slot::kv_lengths, "kv_lengths", argument_role::input, dtype::i32,
                                          {batch_dim}, d.has_kv_lengths(), "per-sequence kv lengths");
  lengths.host_only = true;
  t.push_back(lengths);
  kernel_argument positions =
      make_argument(argument_slot::positions, "positions", argument_role::input, dtype::i32,
                    {{"4", "entries (query_start, key_start, query_total, key_total)", extent_source::description,
                      global_position_count, true}},
                    d.global_positions, "global positions");
  positions.host_only = true;
  t.push_back(positions);
  t.push_back(make_argument(argument_slot::sinks, "sinks", argument_role::input, dtype::f32, {heads_dim(H)},
                            d.has_sinks, "attention sinks"));
  kernel_argument mask = make_argument(argument_slot::mask, "mask", argument_role::input, element, {},
                                       d.has_additive_mask(), "additive mask");
  detail::add_mask_dims(mask, d);
  t.push_back(mask);
  t.push_back(make_argument(argument_slot::key_padding, "key_padding", argument_role::input, dtype::u8,
                            {batch_dim, detail::key_capacity_dim(d)}, d.has_key_padding_mask(), "key-padding mask"));
  for (int n = 0; n < capture_table::max_tensors; ++n) t.push_back(detail::capture_argument(d, n));
  t.push_back(make_argument(argument_slot::scalars, "scalars", argument_role::input, dtype::f32,
                            {{"S", "captured scalars", extent_source::description, d.captures.scalar_count, true}},
                            d.captures.scalar_count > 0, "captured scalar"));
  if (d.is_ragged()) {
    t.push_back(make_argument(argument_slot::output, "output", argument_role::output, element,
                              {queries, heads_dim(H), v_head_dim}));
    t.push_back(make_argument(argument_slot::lse, "lse", argument_role::output, dtype::f32, {heads_dim(H), queries},
                              d.lse_output, "log-sum-exp output"));
  } else {
    t.push_back(make_argument(argument_slot::output, "output", argument_role::output, element,
                              {batch_dim, query_length_dim, heads_dim(H), v_head_dim}));
    t.push_back(make_argument(argument_slot::lse, "lse", argument_role::output, dtype::f32,
                              {batch_dim, heads_dim(H), query_length_dim}, d.lse_output, "log-sum-exp output"));
  }
  return t;
}

/// Whether the visibility table's part reads an argument: the modifiers' captures and the positions
/// the mask sees.
constexpr bool read_by_visibility_table(const kernel_argument& a) {
  return a.slot == argument_slot::positions || a.slot == argument_slot::capture || a.slot == argument_slot::scalars;
}

/// The arguments `d`'s kernel takes, in the generated function's order (argument_table's taken slots).
constexpr attention_argument_table kernel_arguments(const attention_desc& d) { return argument_table(d).taken(); }

using backward_argument = argument<backward_slot>;
inline constexpr int backward_slot_count = 16 + 2 * capture_table::max_tensors;
using backward_argument_table_type = argument_list<backward_slot, backward_slot_count>;

namespace detail {

// An operator argument as the backward's, in slot `slot` with `role`.
constexpr backward_argument as_backward(const kernel_argument& a, backward_slot slot, argument_role role) {
  backward_argument b;
  b.slot = slot;
  b.index = a.index;
  b.name = a.name;
  b.role = role;
  b.type = a.type;
  b.rank = a.rank;
  for (int d = 0; d < a.rank; ++d) b.dims[d] = a.dims[d];
  b.taken = a.taken;
  b.optional = a.optional;
  b.feature = a.feature;
  return b;
}

}  // namespace detail

/// Every slot of a call of `d`'s backward pass (.with_backward()), in the generated function's order:
/// the forward's inputs q, k, v, [sinks], [mask], [key_padding], [captured tensors], [captured
/// scalars] as the forward takes them, then the forward's results output and lse, the loss's
/// gradient of the output d_output, and the gradients dq, dk, dv, [d_sinks] of q, k, v and sinks,
/// each of its input's shape.
constexpr backward_argument_table_type backward_argument_table(const attention_desc& d) {
  const attention_argument_table forward = argument_table(d);
  auto slot_of = [&](argument_slot s) -> const kernel_argument& {
    for (const kernel_argument& a : forward)
      if (a.slot == s) return a;
    throw "attngen: a slot missing from argument_table";
  };
  using role = argument_role;
  backward_argument_table_type t;
  for (const kernel_argument& a : forward) {
    switch (a.slot) {
      case argument_slot::q: t.push_back(detail::as_backward(a, backward_slot::q, role::input)); break;
      case argument_slot::k: t.push_back(detail::as_backward(a, backward_slot::k, role::input)); break;
      case argument_slot::v: t.push_back(detail::as_backward(a, backward_slot::v, role::input)); break;
      case argument_slot::sinks: t.push_back(detail::as_backward(a, backward_slot::sinks, role::input)); break;
      case argument_slot::mask: t.push_back(detail::as_backward(a, backward_slot::mask, role::input)); break;
      case argument_slot::key_padding:
        t.push_back(detail::as_backward(a, backward_slot::key_padding, role::input));
        break;
      case argument_slot::capture: t.push_back(detail::as_backward(a, backward_slot::capture, role::input)); break;
      case argument_slot::scalars: t.push_back(detail::as_backward(a, backward_slot::scalars, role::input)); break;
      default: break;  // the KV cache's and ragged queries' slots: a backward's description has none
    }
  }
  t.push_back(detail::as_backward(slot_of(argument_slot::output), backward_slot::output, role::input));
  backward_argument lse = detail::as_backward(slot_of(argument_slot::lse), backward_slot::lse, role::input);
  lse.taken = true;
  t.push_back(lse);
  backward_argument d_output = detail::as_backward(slot_of(argument_slot::output), backward_slot::d_output, role::input);
  d_output.name = "d_output";
  t.push_back(d_output);
  for (const auto& [from, slot, name] : {detail::gradient_of{argument_slot::q, backward_slot::dq, "dq"},
                                         detail::gradient_of{argument_slot::k, backward_slot::dk, "dk"},
                                         detail::gradient_of{argument_slot::v, backward_slot::dv, "dv"},
                                         detail::gradient_of{argument_slot::sinks, backward_slot::d_sinks, "d_sinks"}}) {
    backward_argument gradient = detail::as_backward(slot_of(from), slot, role::gradient);
    gradient.name = name;
    t.push_back(gradient);
  }
  // Float32 gradients of the captured tensors the score modifier reads, of their shapes, and of the
  // captured scalars where it reads one (attention_backward_args::d_captures, d_scalars).
  constexpr std::string_view capture_gradient_names[] = {"d_captures[0]", "d_captures[1]", "d_captures[2]",
                                                         "d_captures[3]"};
  static_assert(std::size(capture_gradient_names) == capture_table::max_tensors);
  for (const kernel_argument& a : forward)
    if (a.slot == argument_slot::capture) {
      backward_argument gradient = detail::as_backward(a, backward_slot::d_capture, role::gradient);
      gradient.name = capture_gradient_names[a.index];
      gradient.type = dtype::f32;
      gradient.taken = a.taken && d.capture_has_gradient(a.index);
      gradient.feature = "captured float tensor read by the score modifier";
      t.push_back(gradient);
    }
  backward_argument d_scalars = detail::as_backward(slot_of(argument_slot::scalars), backward_slot::d_scalars,
                                                    role::gradient);
  d_scalars.name = "d_scalars";
  d_scalars.taken = d.scalars_have_gradient();
  d_scalars.feature = "captured scalar read by the score modifier";
  t.push_back(d_scalars);
  return t;
}

/// The arguments `d`'s backward pass takes, in the generated function's order.
constexpr backward_argument_table_type backward_arguments(const attention_desc& d) {
  return backward_argument_table(d).taken();
}

}  // namespace attngen
