#pragma once
/// Context parallelism over MPI: one sequence's attention computed by the ranks of a communicator,
/// each holding a slice of the queries and of the keys and values (ring attention). Each rank runs
/// the kernel on its queries against the key/value slice it holds, passes that slice to the next
/// rank with nonblocking sends while it computes, and merges the partial results (attngen::merge) as
/// the slices come round: after N steps every rank has its queries' attention over the whole
/// sequence. A library of its own (attngen::ring), linked only by those who use it; it needs MPI.
///
///     constexpr auto desc = attngen::attention().heads(32).kv_heads(8).head_dim(128)
///                               .causal(attngen::top_left).return_lse().with_global_positions();
///     // attngen_add_kernel(long_context ...), then on every rank:
///     attngen::ring_args a;  // this rank's chunks: attngen::ring_chunks(L, ranks, rank, split)
///     ...
///     attngen::status s = attngen::ring_attention(MPI_COMM_WORLD, attngen::ring_kernel_of<long_context>(), a);
///
/// Causal attention should use ring_split::balanced: rank r holds chunks r and 2N-1-r of 2N, so every
/// rank has as many keys in its queries' past as every other and none idles on the masked triangle.
///
/// Shape contract of one rank's ring_args (outermost first; Lq_r and Lk_r are the lengths of the
/// rank's chunks of query_total and key_total, ring_chunks; every rank passes the same description,
/// batch, totals and split):
///   q            (B, Lq_r, H, D)    the rank's query chunks, concatenated in order
///   k, v         (B, Lk_r, KVH, D), (B, Lk_r, KVH, Dv)  its key chunks likewise
///   mask         additive, as the description's shape with its query rows the rank's (Lq_r) and its
///                key columns the whole sequence's (key_total): e.g. (B, H, Lq_r, key_total)
///   key_padding  (B, key_total) bytes: the whole sequence's
///   sinks        (H) float32; captures and scalars as the kernel takes them (the whole sequence's)
///   output       (B, Lq_r, H, Dv)
///   lse          (B, H, Lq_r) float32, where the description returns it... or left empty
/// Host tensors, any positive strides with the innermost 1.
///
/// Errors come back as a status on every rank, never a hang: a rank's arguments the kernel refuses
/// ("rank 2: k: expected ..."), ranks that disagree on the description, batch or totals, and a
/// failed MPI call (error_code::communication_failed, the communicator's own handler set to return).

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "attngen/runtime.hpp"

namespace attngen {

/// How a sequence's positions are split among the ranks.
enum class ring_split : std::uint8_t {
  contiguous,  ///< N near-equal chunks, rank r the r-th
  balanced,    ///< 2N near-equal chunks, rank r the r-th and the (2N-1-r)-th: for causal attention
};

/// A run of consecutive positions of the sequence.
struct ring_chunk {
  std::int64_t start = 0, length = 0;
};

/// The chunks of a sequence of `length` positions that rank `rank` of `ranks` holds under `split`,
/// in order: the rank's tensors hold their rows one after another. Chunks differ in length by at
/// most one, the longer first; with fewer positions than chunks some are empty.
std::vector<ring_chunk> ring_chunks(std::int64_t length, int ranks, int rank, ring_split split);

/// A generated kernel as the ring calls it: its description, which must have
/// .with_global_positions() and .return_lse(), and its run.
struct ring_kernel {
  attention_desc description;
  status (*run)(const attention_args&) = nullptr;
};

/// The ring_kernel of a generated kernel struct.
template <typename Kernel>
constexpr ring_kernel ring_kernel_of() {
  static_assert(Kernel::description.global_positions && Kernel::description.lse_output,
                "attngen: ring_attention calls the kernel on slices and merges their partial results: its "
                "description needs .with_global_positions() and .return_lse()");
  return {Kernel::description, &Kernel::run};
}

/// One rank's part of a context-parallel call (shape contract above).
struct ring_args {
  tensor_view q, k, v;
  tensor_view mask;         ///< only if the description has an additive mask
  tensor_view key_padding;  ///< only if the description has a key-padding mask
  tensor_view sinks;        ///< only with attention sinks
  tensor_view captures[capture_table::max_tensors];
  float scalars[capture_table::max_scalars] = {};
  tensor_view output;
  tensor_view lse;          ///< optional: the rows' log-sum-exp over the whole sequence
  std::int64_t query_total = 0, key_total = 0;  ///< the whole sequence's queries and keys
  ring_split split = ring_split::contiguous;
};

/// Where one ring step's time went on a rank.
struct ring_step_time {
  double compute_seconds = 0;  ///< the kernel calls and merges on the slice held
  /// Waiting for the next slice after computing: the communication the computation did not hide.
  double wait_seconds = 0;
  std::int64_t bytes_received = 0;  ///< the next slice's keys and values
};

/// A call's time on this rank: one entry per step (the last receives nothing), and the whole.
struct ring_timings {
  std::vector<ring_step_time> steps;
  double total_seconds = 0;
};

/// Runs the ring over `communicator` (every rank calls it, collectively). On success this rank's
/// `output` (and `lse`) hold its queries' attention over the whole sequence; on error every rank
/// returns an error and writes nothing. `timings`, where given, receives this rank's step times.
status ring_attention(MPI_Comm communicator, const ring_kernel& kernel, const ring_args& args,
                      ring_timings* timings = nullptr);

}  // namespace attngen
