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
enum class argument_slot : std::uint8_t { q, k, v, mask, key_padding, capture, scalars, output, lse };

/// Where a dimension's extent comes from.
enum class extent_source : std::uint8_t {
  batch,         ///< B, a run-time extent
  query_length,  ///< Lq, a run-time extent
  key_length,    ///< Lk, a run-time extent
  description,   ///< fixed by the description: `extent`
};

/// One dimension of an argument. A run-time extent is set by the first argument in the table that
/// has it (q sets B and Lq, k sets Lk); the others must agree with that one.
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

  constexpr bool is_output() const { return role != argument_role::input; }
};

/// An argument of an attention operator's call (attngen::attention_args).
using kernel_argument = argument<argument_slot>;

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
inline constexpr int attention_slot_count = 8 + capture_table::max_tensors;
using attention_argument_table = argument_list<argument_slot, attention_slot_count>;

namespace detail {

inline constexpr argument_dim batch_dim{"B", "batch", extent_source::batch};
inline constexpr argument_dim query_length_dim{"Lq", "Lq", extent_source::query_length};
inline constexpr argument_dim key_length_dim{"Lk", "Lk", extent_source::key_length};
constexpr argument_dim heads_dim(int h) { return {"H", "heads", extent_source::description, h, true}; }

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

/// The dimensions of the additive mask of shape `s`.
constexpr void add_mask_dims(kernel_argument& a, mask_shape s, int heads) {
  const argument_dim one{"1", "heads (broadcast)", extent_source::description, 1, true};
  switch (s) {
    case mask_shape::lq_lk: a.dims[0] = query_length_dim; a.dims[1] = key_length_dim; a.rank = 2; return;
    case mask_shape::h_lq_lk:
      a.dims[0] = heads_dim(heads); a.dims[1] = query_length_dim; a.dims[2] = key_length_dim; a.rank = 3; return;
    case mask_shape::b_h_lq_lk:
    case mask_shape::b_1_lq_lk:
      a.dims[0] = batch_dim;
      a.dims[1] = s == mask_shape::b_h_lq_lk ? heads_dim(heads) : one;
      a.dims[2] = query_length_dim;
      a.dims[3] = key_length_dim;
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
      case extent_kind::query_length: a.dims[k] = query_length_dim; break;
      case extent_kind::key_length: a.dims[k] = key_length_dim; break;
      case extent_kind::fixed: a.dims[k] = {"n", "declared extent", extent_source::description, e.size}; break;
    }
  }
  a.rank = declared.rank;
  return a;
}

}  // namespace detail

/// Every slot of a call of `d`'s kernel, in the generated function's order: q, k, v, [mask],
/// [key_padding], [captured tensors], [captured scalars], then the outputs output, [lse].
/// Captured scalars reach the kernel as one float32 vector (attention_args::scalars).
constexpr attention_argument_table argument_table(const attention_desc& d) {
  using detail::batch_dim, detail::query_length_dim, detail::key_length_dim, detail::heads_dim, detail::make_argument;
  const int H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  const argument_dim head_dim{"D", "head_dim", extent_source::description, D};
  const argument_dim v_head_dim{"Dv", "v head_dim", extent_source::description, Dv};
  const argument_dim kv_heads{"KVH", "kv heads", extent_source::description, KVH, true};
  const dtype element = d.element_type;
  attention_argument_table t;
  t.push_back(make_argument(argument_slot::q, "q", argument_role::input, element,
                            {batch_dim, query_length_dim, heads_dim(H), head_dim}));
  t.push_back(make_argument(argument_slot::k, "k", argument_role::input, element,
                            {batch_dim, key_length_dim, kv_heads, head_dim}));
  t.push_back(make_argument(argument_slot::v, "v", argument_role::input, element,
                            {batch_dim, key_length_dim, kv_heads, v_head_dim}));
  kernel_argument mask = make_argument(argument_slot::mask, "mask", argument_role::input, element, {},
                                       d.has_additive_mask(), "additive mask");
  detail::add_mask_dims(mask, d.additive_mask_shape, H);
  t.push_back(mask);
  t.push_back(make_argument(argument_slot::key_padding, "key_padding", argument_role::input, dtype::u8,
                            {batch_dim, key_length_dim}, d.has_key_padding_mask(), "key-padding mask"));
  for (int n = 0; n < capture_table::max_tensors; ++n) t.push_back(detail::capture_argument(d, n));
  t.push_back(make_argument(argument_slot::scalars, "scalars", argument_role::input, dtype::f32,
                            {{"S", "captured scalars", extent_source::description, d.captures.scalar_count, true}},
                            d.captures.scalar_count > 0, "captured scalar"));
  t.push_back(make_argument(argument_slot::output, "output", argument_role::output, element,
                            {batch_dim, query_length_dim, heads_dim(H), v_head_dim}));
  t.push_back(make_argument(argument_slot::lse, "lse", argument_role::output, dtype::f32,
                            {batch_dim, heads_dim(H), query_length_dim}, d.lse_output, "log-sum-exp output"));
  return t;
}

/// Whether an argument carries the modifiers' captures: what the visibility table's part reads.
constexpr bool reads_captures(const kernel_argument& a) {
  return a.slot == argument_slot::capture || a.slot == argument_slot::scalars;
}

/// The arguments `d`'s kernel takes, in the generated function's order (argument_table's taken slots).
constexpr attention_argument_table kernel_arguments(const attention_desc& d) { return argument_table(d).taken(); }

}  // namespace attngen
