// ring_attention on the ranks mpirun starts (1 to 4): each rank's rows of the whole sequence's
// attention, against the float64 reference within the tolerance of its merges, for causal and
// non-causal, GQA, a sliding window and document mask, key padding with an additive mask, lengths
// that do not divide by the ranks and ranks whose slices are empty; and the errors every rank
// returns, never a hang.
#include <catch2/catch.hpp>
#include <mpi.h>

#include <vector>

#include "aot_positions_causal_top_left.hpp"
#include "aot_positions_gqa.hpp"
#include "aot_positions_padding_mask.hpp"
#include "aot_positions_window_document.hpp"
#include "attngen/ring/ring_attention.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"

using namespace attngen;
using namespace attngen::testing;
using Catch::Matchers::StartsWith;

namespace {

int this_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int rank_count() {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return ranks;
}

// A rank's chunks as runs of rows.
std::vector<row_run> runs_of(const std::vector<ring_chunk>& chunks) {
  std::vector<row_run> runs;
  for (const ring_chunk& c : chunks) runs.push_back({c.start, c.length});
  return runs;
}

std::int64_t length_of(const std::vector<ring_chunk>& chunks) {
  std::int64_t n = 0;
  for (const ring_chunk& c : chunks) n += c.length;
  return n;
}

// This rank's tensors of a whole problem, cut to its chunks, and the ring's arguments over them.
struct rank_slice {
  std::vector<ring_chunk> query_chunks, key_chunks;
  std::vector<float> q, k, v, mask, output, lse;
  std::vector<std::uint8_t> key_padding;
  std::vector<std::vector<float>> captures;
  std::vector<std::int32_t> integer_captures[capture_table::max_tensors];

  rank_slice(const attention_problem& whole, ring_split split) {
    const attention_desc& d = whole.desc;
    const std::int64_t B = whole.batch, Lq = whole.query_length, Lk = whole.key_length, H = d.num_heads,
                       KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
    query_chunks = ring_chunks(Lq, rank_count(), this_rank(), split);
    key_chunks = ring_chunks(Lk, rank_count(), this_rank(), split);
    q = rows_of(whole.q, {B, Lq, H, D}, 1, runs_of(query_chunks));
    k = rows_of(whole.k, {B, Lk, KVH, D}, 1, runs_of(key_chunks));
    v = rows_of(whole.v, {B, Lk, KVH, Dv}, 1, runs_of(key_chunks));
    if (d.has_additive_mask()) {
      const std::vector<int> shape = whole.mask_shape();
      mask = rows_of(whole.mask, std::vector<std::int64_t>(shape.begin(), shape.end()), int(shape.size()) - 2, runs_of(query_chunks));
    }
    key_padding = whole.key_padding;
    captures = whole.captures;
    for (int n = 0; n < d.captures.tensor_count; ++n)
      integer_captures[n].assign(captures[std::size_t(n)].begin(), captures[std::size_t(n)].end());
    output.assign(std::size_t(B * length_of(query_chunks) * H * Dv), -1.0f);
    lse.assign(std::size_t(B * H * length_of(query_chunks)), -1.0f);
  }

  ring_args args(const attention_problem& whole, ring_split split) {
    const attention_desc& d = whole.desc;
    const std::int64_t B = whole.batch, H = d.num_heads, KVH = d.effective_kv_heads(), D = d.qk_head_dim,
                       Dv = d.effective_v_head_dim(), Lq_r = length_of(query_chunks), Lk_r = length_of(key_chunks);
    ring_args a;
    a.q = make_tensor(q.data(), {B, Lq_r, H, D});
    a.k = make_tensor(k.data(), {B, Lk_r, KVH, D});
    a.v = make_tensor(v.data(), {B, Lk_r, KVH, Dv});
    if (d.has_additive_mask()) a.mask = make_tensor(mask.data(), {B, 1, Lq_r, std::int64_t(whole.key_length)});
    if (d.has_key_padding_mask()) a.key_padding = make_tensor(key_padding.data(), {B, std::int64_t(whole.key_length)});
    for (int n = 0; n < d.captures.tensor_count; ++n) {
      const std::vector<int> shape = whole.capture_shape(n);
      a.captures[n] = make_tensor(integer_captures[n].data(), dtype::i32, {shape[0], shape[1]});
    }
    a.output = make_tensor(output.data(), {B, Lq_r, H, Dv});
    a.lse = make_tensor(lse.data(), {B, H, Lq_r});
    a.query_total = whole.query_length;
    a.key_total = whole.key_length;
    a.split = split;
    return a;
  }
};

// Runs the ring on a whole problem of `Kernel` and checks this rank's rows against the reference.
template <typename Kernel>
void check_ring(int batch, int length, ring_split split, std::uint32_t seed) {
  const attention_problem whole = make_whole_problem(Kernel::description, batch, length, length, seed);
  rank_slice slice(whole, split);
  ring_timings timings;
  const status s = ring_attention(MPI_COMM_WORLD, ring_kernel_of<Kernel>(), slice.args(whole, split), &timings);
  INFO("rank " << this_rank() << " of " << rank_count() << ": " << s.message());
  REQUIRE(s.ok());
  CHECK(int(timings.steps.size()) == rank_count());
  // The reference's rows of this rank's chunks, in the rank's order.
  const reference_result expected = reference_attention(whole);
  const attention_desc& d = whole.desc;
  const std::int64_t B = batch, L = length, H = d.num_heads, Dv = d.effective_v_head_dim();
  const std::vector<float> want_output(expected.output.begin(), expected.output.end());
  const std::vector<float> want_lse(expected.lse.begin(), expected.lse.end());
  attention_problem mine = whole;
  mine.query_length = int(length_of(slice.query_chunks));
  reference_result rows;
  for (float x : rows_of(want_output, {B, L, H, Dv}, 1, runs_of(slice.query_chunks))) rows.output.push_back(x);
  for (float x : rows_of(want_lse, {B, H, L}, 2, runs_of(slice.query_chunks))) rows.lse.push_back(x);
  // Each row merges at most one partial result per key chunk, then the sinks' merge.
  const int merges = 2 * rank_count() + 1;
  const comparison c = compare_with_reference(mine, rows, slice.output, slice.lse, merges);
  INFO(c.first_failure);
  CHECK(c.ok);
}

}  // namespace

TEST_CASE("ring: causal GQA on a balanced split equals the whole's attention", "[ring]") {
  check_ring<aot_positions_causal_top_left>(2, 150, ring_split::balanced, 1);
}

TEST_CASE("ring: causal GQA on a contiguous split equals the whole's attention", "[ring]") {
  check_ring<aot_positions_causal_top_left>(1, 97, ring_split::contiguous, 2);
}

TEST_CASE("ring: non-causal GQA, a length the ranks do not divide", "[ring]") {
  check_ring<aot_positions_gqa>(2, 61, ring_split::contiguous, 3);
}

TEST_CASE("ring: a sliding window and a document mask over the whole sequence", "[ring][modifiers]") {
  check_ring<aot_positions_window_document>(2, 131, ring_split::balanced, 4);
}

TEST_CASE("ring: key padding and an additive mask sliced to each step's keys", "[ring][masks]") {
  check_ring<aot_positions_padding_mask>(2, 77, ring_split::balanced, 5);
}

TEST_CASE("ring: fewer positions than chunks leaves some ranks' slices empty", "[ring]") {
  check_ring<aot_positions_causal_top_left>(1, 5, ring_split::balanced, 6);
  check_ring<aot_positions_gqa>(1, 2, ring_split::contiguous, 7);
}

TEST_CASE("ring: ranks that disagree on the sequence's length all return the error", "[ring][errors]") {
  const attention_problem whole = make_whole_problem(aot_positions_gqa::description, 1, 20, 20, 8);
  rank_slice slice(whole, ring_split::contiguous);
  ring_args a = slice.args(whole, ring_split::contiguous);
  if (this_rank() == 0) a.key_total += 1;
  const status s = ring_attention(MPI_COMM_WORLD, ring_kernel_of<aot_positions_gqa>(), a);
  if (rank_count() == 1) {
    // One rank agrees with itself; its k is then one row short of its chunk of the longer sequence.
    CHECK(s.code() == error_code::wrong_shape);
    return;
  }
  CHECK(s.code() == error_code::communication_failed);
  CHECK_THAT(s.message(), StartsWith("ranks disagree on key_total: from 20 to 21"));
  CHECK(slice.output == std::vector<float>(slice.output.size(), -1.0f));
}

TEST_CASE("ring: one rank's tensor the kernel refuses is every rank's error, naming the rank", "[ring][errors]") {
  const attention_problem whole = make_whole_problem(aot_positions_gqa::description, 1, 20, 20, 9);
  rank_slice slice(whole, ring_split::contiguous);
  ring_args a = slice.args(whole, ring_split::contiguous);
  const int last = rank_count() - 1;
  if (this_rank() == last) a.v.shape[3] = 32;
  const status s = ring_attention(MPI_COMM_WORLD, ring_kernel_of<aot_positions_gqa>(), a);
  CHECK(s.code() == error_code::wrong_shape);
  CHECK_THAT(s.message(), StartsWith("rank " + std::to_string(last) + ": v: expected v head_dim 64"));
  CHECK(slice.output == std::vector<float>(slice.output.size(), -1.0f));
}

TEST_CASE("ring: a null communicator is refused with communication_failed", "[ring][errors]") {
  const attention_problem whole = make_whole_problem(aot_positions_gqa::description, 1, 8, 8, 10);
  rank_slice slice(whole, ring_split::contiguous);
  const status s = ring_attention(MPI_COMM_NULL, ring_kernel_of<aot_positions_gqa>(), slice.args(whole, ring_split::contiguous));
  CHECK(s.code() == error_code::communication_failed);
  CHECK_THAT(s.message(), StartsWith("communicator: MPI_COMM_NULL"));
}

TEST_CASE("ring: a rank that leaves out the mask gets the kernel's error on every rank", "[ring][errors]") {
  const attention_problem whole = make_whole_problem(aot_positions_padding_mask::description, 1, 16, 16, 11);
  rank_slice slice(whole, ring_split::balanced);
  ring_args a = slice.args(whole, ring_split::balanced);
  if (this_rank() == 0) a.mask = {};
  const status s = ring_attention(MPI_COMM_WORLD, ring_kernel_of<aot_positions_padding_mask>(), a);
  CHECK(s.code() == error_code::null_pointer);
  CHECK_THAT(s.message(), StartsWith("rank 0: mask:"));
}
