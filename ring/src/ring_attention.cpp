#include "attngen/ring/ring_attention.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "attngen/runtime/detail/sequence_views.hpp"
#include "attngen/text_format.hpp"
#include "collective_status.hpp"

namespace attngen {

namespace {

using detail::sequence_cut::cut;
using ring::agreed_status;
using ring::mpi_failure;

std::int64_t total_length(const std::vector<ring_chunk>& chunks) {
  return std::accumulate(chunks.begin(), chunks.end(), std::int64_t(0),
                         [](std::int64_t sum, const ring_chunk& c) { return sum + c.length; });
}

// A chunk and where its rows begin in the rank's tensors.
struct placed_chunk {
  ring_chunk chunk;
  std::int64_t local_start = 0;
};

std::vector<placed_chunk> placed(const std::vector<ring_chunk>& chunks) {
  std::vector<placed_chunk> out;
  std::int64_t at = 0;
  for (const ring_chunk& c : chunks) {
    out.push_back({c, at});
    at += c.length;
  }
  return out;
}

// FNV-1a of the description's text: one number the ranks compare.
std::int64_t description_hash(const attention_desc& desc) {
  std::uint64_t hash = 1469598103934665603ull;
  for (char c : to_text(desc)) hash = (hash ^ std::uint8_t(c)) * 1099511628211ull;
  return std::int64_t(hash >> 1);
}

// The keys and values a rank holds, packed token by token for the ring: (B, tokens, KVH x (D + Dv))
// in the KV element type, each token's K heads then its V heads.
class kv_slice {
 public:
  kv_slice(const attention_desc& desc, std::int64_t batch, std::int64_t capacity)
      : kv_heads_(desc.effective_kv_heads()),
        head_dim_(desc.qk_head_dim),
        v_head_dim_(desc.effective_v_head_dim()),
        type_(desc.effective_kv_element()),
        batch_(batch),
        bytes_(std::size_t(batch * capacity * token_elements()) * size_of(type_)) {}

  std::int64_t token_elements() const { return kv_heads_ * (head_dim_ + v_head_dim_); }
  std::int64_t token_bytes() const { return token_elements() * std::int64_t(size_of(type_)); }
  std::uint8_t* data() { return bytes_.data(); }

  // Copies the rank's own k and v (B, tokens, KVH, D / Dv) in.
  void pack(const tensor_view& k, const tensor_view& v, std::int64_t tokens) {
    const std::size_t element = size_of(type_);
    for (std::int64_t b = 0; b < batch_; ++b)
      for (std::int64_t j = 0; j < tokens; ++j) {
        std::uint8_t* to = bytes_.data() + std::size_t((b * tokens + j) * token_bytes());
        for (const auto& [t, width] : {std::pair{&k, head_dim_}, std::pair{&v, v_head_dim_}})
          for (std::int64_t g = 0; g < kv_heads_; ++g) {
            const auto* from = static_cast<const std::uint8_t*>(t->data) +
                               std::size_t(b * t->strides[0] + j * t->strides[1] + g * t->strides[2]) * element;
            std::memcpy(to, from, std::size_t(width) * element);
            to += std::size_t(width) * element;
          }
      }
  }

  // The k and v views of tokens [first, first + count) of a slice of `tokens` tokens held here.
  std::pair<tensor_view, tensor_view> views(std::int64_t tokens, std::int64_t first, std::int64_t count) {
    const std::int64_t row = token_elements();
    tensor_view k;
    k.data = bytes_.data() + std::size_t(first * token_bytes());
    k.type = type_;
    k.rank = 4;
    const std::int64_t shape[] = {batch_, count, kv_heads_, head_dim_};
    const std::int64_t strides[] = {tokens * row, row, head_dim_, 1};
    std::copy(std::begin(shape), std::end(shape), k.shape);
    std::copy(std::begin(strides), std::end(strides), k.strides);
    tensor_view v = k;
    v.data = static_cast<std::uint8_t*>(k.data) + std::size_t(kv_heads_ * head_dim_) * size_of(type_);
    v.shape[3] = v_head_dim_;
    v.strides[2] = v_head_dim_;
    return {k, v};
  }

 private:
  std::int64_t kv_heads_, head_dim_, v_head_dim_;
  dtype type_;
  std::int64_t batch_;
  std::vector<std::uint8_t> bytes_;
};

// A query chunk's running result over the slices seen so far: float32 output and log-sum-exp,
// starting empty (0 and -inf), and the scratch each kernel call writes its partial result to.
struct query_accumulator {
  placed_chunk rows;
  std::vector<float> output, lse;
  std::vector<std::uint8_t> partial_output;
  std::vector<float> partial_lse;

  query_accumulator(const placed_chunk& c, const attention_desc& d, std::int64_t batch)
      : rows(c),
        output(std::size_t(batch * c.chunk.length * d.num_heads * d.effective_v_head_dim()), 0.0f),
        lse(std::size_t(batch * d.num_heads * c.chunk.length), -std::numeric_limits<float>::infinity()),
        partial_output(output.size() * size_of(d.element_type)),
        partial_lse(lse.size()) {}

  attention_partial running(const attention_desc& d, std::int64_t batch) {
    const std::int64_t L = rows.chunk.length, H = d.num_heads, Dv = d.effective_v_head_dim();
    return {make_tensor(output.data(), {batch, L, H, Dv}), make_tensor(lse.data(), {batch, H, L})};
  }
  attention_partial partial(const attention_desc& d, std::int64_t batch) {
    const std::int64_t L = rows.chunk.length, H = d.num_heads, Dv = d.effective_v_head_dim();
    return {make_tensor(partial_output.data(), d.element_type, {batch, L, H, Dv}),
            make_tensor(partial_lse.data(), {batch, H, L})};
  }
};

// Whether causality hides every key of `keys` from every query of `queries`.
bool entirely_in_future(const attention_desc& d, const ring_args& a, const ring_chunk& queries, const ring_chunk& keys) {
  if (!d.is_causal()) return false;
  const std::int64_t shift = d.causal_mode == causal_alignment::bottom_right ? a.key_total - a.query_total : 0;
  return keys.start > queries.start + queries.length - 1 + shift;
}

// The ring's own shape checks, before the kernel's: the rank's rows and the whole sequence's keys.
status check_ring_shapes(const ring_kernel& kernel, const ring_args& a, std::int64_t queries, std::int64_t keys) {
  const attention_desc& d = kernel.description;
  if (!d.global_positions || !d.lse_output)
    return status(error_code::wrong_shape,
                  "kernel: its description needs .with_global_positions() and .return_lse() for the ring's slices "
                  "and their merge");
  if (kernel.run == nullptr) return status(error_code::null_pointer, "kernel: no run function");
  if (a.query_total < 0 || a.key_total < 0)
    return status(error_code::wrong_shape, "query_total and key_total: negative (" + std::to_string(a.query_total) +
                                               ", " + std::to_string(a.key_total) + ")");
  for (const auto& [name, view, expected] : {std::tuple{"q", &a.q, queries}, std::tuple{"k", &a.k, keys},
                                             std::tuple{"v", &a.v, keys}, std::tuple{"output", &a.output, queries}}) {
    if (view->rank != 4)
      return status(error_code::wrong_rank,
                    std::string(name) + ": expected rank 4, got rank " + std::to_string(view->rank));
    if (view->shape[1] != expected)
      return status(error_code::wrong_shape,
                    std::string(name) + ": expected " + std::to_string(expected) +
                        " rows, this rank's chunks of the sequence under its split, got " + std::to_string(view->shape[1]));
  }
  for (const tensor_view* view : {&a.q, &a.k, &a.v, &a.output, &a.mask, &a.key_padding, &a.lse})
    if (!view->empty() && view->device != device_kind::host)
      return status(error_code::wrong_device, "ring_attention: tensors on a GPU; the ring runs on host tensors");
  if (d.has_additive_mask() && a.mask.rank >= 2 && a.mask.shape[a.mask.rank - 1] != a.key_total)
    return status(error_code::wrong_shape, "mask: expected the whole sequence's keys (key_total " +
                                               std::to_string(a.key_total) + ") in its last dimension, got " +
                                               std::to_string(a.mask.shape[a.mask.rank - 1]));
  if (d.has_key_padding_mask() && a.key_padding.rank == 2 && a.key_padding.shape[1] != a.key_total)
    return status(error_code::wrong_shape, "key_padding: expected (B, key_total " + std::to_string(a.key_total) +
                                               "), got " + std::to_string(a.key_padding.shape[1]) + " keys");
  return {};
}

// The kernel call on the rank's queries `q_rows` against keys `keys` of the slice held.
struct slice_call {
  const ring_kernel& kernel;
  const ring_args& args;
  const std::vector<float>& no_sinks;

  attention_args arguments(const placed_chunk& q_rows, const ring_chunk& keys, const tensor_view& k,
                           const tensor_view& v, const attention_partial& result, std::int32_t (&positions)[4]) const {
    const attention_desc& d = kernel.description;
    attention_args c;
    c.q = cut(args.q, 1, q_rows.local_start, q_rows.chunk.length);
    c.k = k;
    c.v = v;
    // A mask of another number of dimensions goes as given, for the kernel's validation to name.
    c.mask = args.mask;
    if (d.has_additive_mask() && args.mask.rank >= 2) {
      const int rows_dim = args.mask.rank - 2;
      c.mask = cut(cut(args.mask, rows_dim, q_rows.local_start, q_rows.chunk.length), rows_dim + 1,
                       keys.start, keys.length);
    }
    c.key_padding = args.key_padding;
    if (d.has_key_padding_mask() && args.key_padding.rank == 2)
      c.key_padding = cut(args.key_padding, 1, keys.start, keys.length);
    // The sinks join the denominator once, in the final merge: each slice's call gets none.
    if (d.has_sinks) c.sinks = make_tensor(no_sinks.data(), {std::int64_t(no_sinks.size())});
    std::copy(std::begin(args.captures), std::end(args.captures), std::begin(c.captures));
    std::copy(std::begin(args.scalars), std::end(args.scalars), std::begin(c.scalars));
    positions[int(global_position::query_start)] = std::int32_t(q_rows.chunk.start);
    positions[int(global_position::key_start)] = std::int32_t(keys.start);
    positions[int(global_position::query_total)] = std::int32_t(args.query_total);
    positions[int(global_position::key_total)] = std::int32_t(args.key_total);
    c.positions = make_tensor(positions, dtype::i32, {std::int64_t(global_position_count)});
    c.output = result.output;
    c.lse = result.lse;
    return c;
  }
};

// The ring on a communicator whose errors return; `rank` of `ranks`.
status run_ring(MPI_Comm comm, int rank, int ranks, const ring_kernel& kernel, const ring_args& a,
                ring_timings* timings) {
  const double started = MPI_Wtime();
  const attention_desc& d = kernel.description;
  const std::int64_t batch = a.q.rank == 4 ? a.q.shape[0] : 0;
  const std::vector<ring_chunk> my_queries = ring_chunks(a.query_total, ranks, rank, a.split);
  const std::vector<ring_chunk> my_keys = ring_chunks(a.key_total, ranks, rank, a.split);
  status local = check_ring_shapes(kernel, a, total_length(my_queries), total_length(my_keys));

  // Every rank runs the same kernel on the same sequence: compared before anything else is sent.
  if (status s = ring::check_agreement(comm, {{"the kernel's description", description_hash(d)},
                                              {"batch", batch},
                                              {"query_total", a.query_total},
                                              {"key_total", a.key_total},
                                              {"split", std::int64_t(a.split)}});
      !s)
    return s;

  std::vector<query_accumulator> accumulators;
  if (local.ok())
    for (const placed_chunk& c : placed(my_queries)) accumulators.emplace_back(c, d, batch);
  const std::vector<float> no_sinks(std::size_t(d.num_heads), std::numeric_limits<float>::lowest());
  const slice_call call{kernel, a, no_sinks};
  // The kernel's own checks of the rank's tensors, on its queries against its own keys.
  if (local.ok()) {
    std::int32_t positions[4];
    const placed_chunk all_queries{{0, total_length(my_queries)}, 0};
    const ring_chunk all_keys{0, total_length(my_keys)};
    tensor_view lse = a.lse;
    std::vector<float> lse_scratch;
    if (lse.empty()) {
      lse_scratch.resize(std::size_t(batch * d.num_heads * all_queries.chunk.length));
      lse = make_tensor(lse_scratch.data(), {batch, std::int64_t(d.num_heads), all_queries.chunk.length});
    }
    attention_args whole = call.arguments(all_queries, all_keys, a.k, a.v, {a.output, lse}, positions);
    whole.sinks = a.sinks;
    if (d.has_additive_mask() && a.mask.rank >= 2) whole.mask = cut(a.mask, a.mask.rank - 1, 0, all_keys.length);
    if (d.has_key_padding_mask() && a.key_padding.rank == 2)
      whole.key_padding = cut(a.key_padding, 1, 0, all_keys.length);
    local = validate(d, whole);
  }
  if (status s = agreed_status(comm, rank, local); !s) return s;

  // Slices travel as whole tokens: a datatype of one token's keys and values.
  std::int64_t capacity = 0;
  for (int r = 0; r < ranks; ++r) capacity = std::max(capacity, total_length(ring_chunks(a.key_total, ranks, r, a.split)));
  kv_slice held(d, batch, capacity), next(d, batch, capacity);
  held.pack(a.k, a.v, total_length(my_keys));
  MPI_Datatype token;
  if (int e = MPI_Type_contiguous(int(held.token_bytes()), MPI_BYTE, &token); e != MPI_SUCCESS)
    return mpi_failure(e, "MPI_Type_contiguous");
  MPI_Type_commit(&token);

  status failure;  // the first kernel or merge error on this rank; the ring still turns, so no rank waits
  const int to = (rank + 1) % ranks, from = (rank + ranks - 1) % ranks;
  for (int step = 0; step < ranks; ++step) {
    const int holder = (rank - step + ranks) % ranks, incoming = (holder + ranks - 1) % ranks;
    const std::vector<ring_chunk> held_keys = ring_chunks(a.key_total, ranks, holder, a.split);
    const std::int64_t held_tokens = total_length(held_keys);
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    ring_step_time time;
    if (step + 1 < ranks) {
      const std::int64_t incoming_tokens = total_length(ring_chunks(a.key_total, ranks, incoming, a.split));
      time.bytes_received = batch * incoming_tokens * held.token_bytes();
      if (int e = MPI_Irecv(next.data(), int(batch * incoming_tokens), token, from, step, comm, &requests[0]);
          e != MPI_SUCCESS && failure.ok())
        failure = mpi_failure(e, "MPI_Irecv from rank " + std::to_string(from));
      if (int e = MPI_Isend(held.data(), int(batch * held_tokens), token, to, step, comm, &requests[1]);
          e != MPI_SUCCESS && failure.ok())
        failure = mpi_failure(e, "MPI_Isend to rank " + std::to_string(to));
    }
    const double compute_start = MPI_Wtime();
    for (query_accumulator& acc : accumulators) {
      for (const placed_chunk& keys : placed(held_keys)) {
        if (!failure.ok() || acc.rows.chunk.length == 0 || keys.chunk.length == 0 ||
            entirely_in_future(d, a, acc.rows.chunk, keys.chunk))
          continue;
        const auto [k, v] = held.views(held_tokens, keys.local_start, keys.chunk.length);
        std::int32_t positions[4];
        const attention_partial part = acc.partial(d, batch);
        if (status s = kernel.run(call.arguments(acc.rows, keys.chunk, k, v, part, positions)); !s) {
          failure = s;
          continue;
        }
        const attention_partial parts[] = {acc.running(d, batch), part};
        if (status s = merge(parts, 2, parts[0].output, parts[0].lse); !s) failure = s;
        // Lets MPI move the slice between kernel calls, where its progress needs the library's calls.
        int done = 0;
        MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
      }
    }
    const double wait_start = MPI_Wtime();
    if (int e = MPI_Waitall(2, requests, MPI_STATUSES_IGNORE); e != MPI_SUCCESS && failure.ok())
      failure = mpi_failure(e, "MPI_Waitall for the ring's slices");
    time.compute_seconds = wait_start - compute_start;
    time.wait_seconds = MPI_Wtime() - wait_start;
    if (timings != nullptr) timings->steps.push_back(time);
    std::swap(held, next);
  }
  MPI_Type_free(&token);
  if (status s = agreed_status(comm, rank, failure); !s) return s;

  // The sinks join once, here; each query chunk's rows of the output (and log-sum-exp).
  for (query_accumulator& acc : accumulators) {
    const placed_chunk& rows = acc.rows;
    const attention_partial running = acc.running(d, batch);
    const tensor_view output = cut(a.output, 1, rows.local_start, rows.chunk.length);
    const tensor_view lse = a.lse.empty() ? running.lse : cut(a.lse, 2, rows.local_start, rows.chunk.length);
    if (status s = merge(&running, 1, output, lse, d.has_sinks ? a.sinks : tensor_view{}); !s) {
      failure = s;
      break;
    }
  }
  if (timings != nullptr) timings->total_seconds = MPI_Wtime() - started;
  return agreed_status(comm, rank, failure);
}

}  // namespace

status ring_attention(MPI_Comm communicator, const ring_kernel& kernel, const ring_args& args, ring_timings* timings) {
  if (timings != nullptr) *timings = {};
  if (communicator == MPI_COMM_NULL)
    return status(error_code::communication_failed, "communicator: MPI_COMM_NULL; pass the ranks' communicator");
  // A communicator of the call's own: its messages never meet the app's, and its errors return.
  MPI_Comm comm;
  if (int e = MPI_Comm_dup(communicator, &comm); e != MPI_SUCCESS) return ring::mpi_failure(e, "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  status result;
  try {
    result = run_ring(comm, rank, ranks, kernel, args, timings);
  } catch (const std::bad_alloc&) {
    result = status(error_code::kernel_failed, "out of memory in ring_attention");
  }
  MPI_Comm_free(&comm);
  return result;
}

}  // namespace attngen
