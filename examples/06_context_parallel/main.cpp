// One long causal sequence split across MPI ranks (ring attention, balanced chunks): each rank's
// sampled rows checked against the single-process kernel, then the time of each ring step split
// into computation, the communication it did not hide, and the same transfers alone.
//   mpirun -np 2 context_parallel [sequence_length] [repeats]
//   context_parallel --single [sequence_length] [repeats]   the whole sequence in one process
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attngen/ring/ring_attention.hpp"
#include "long_context.hpp"

namespace {

using kernel = example::long_context;
constexpr std::int64_t H = kernel::description.num_heads;
constexpr std::int64_t KVH = kernel::description.effective_kv_heads();
constexpr std::int64_t D = kernel::description.qk_head_dim;

// The whole sequence's (1, L, heads, D) rows, the same on every rank.
std::vector<float> random_rows(std::int64_t L, std::int64_t heads, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> t(std::size_t(L * heads * D));
  for (float& x : t) x = uniform(rng);
  return t;
}

// Rows of `chunks` of a (1, L, heads, D) tensor, one after another.
std::vector<float> rows_of(const std::vector<float>& t, std::int64_t heads, const std::vector<attngen::ring_chunk>& chunks) {
  std::vector<float> out;
  for (const attngen::ring_chunk& c : chunks)
    out.insert(out.end(), t.begin() + c.start * heads * D, t.begin() + (c.start + c.length) * heads * D);
  return out;
}

// One call of the kernel on queries [first, first + count) of the whole sequence against all of it.
attngen::status run_whole(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                          std::int64_t L, std::int64_t first, std::int64_t count, float* output, float* lse) {
  std::int32_t positions[] = {std::int32_t(first), 0, std::int32_t(L), std::int32_t(L)};
  attngen::attention_args a;
  a.q = attngen::make_tensor(q.data() + first * H * D, {1, count, H, D});
  a.k = attngen::make_tensor(k.data(), {1, L, KVH, D});
  a.v = attngen::make_tensor(v.data(), {1, L, KVH, D});
  a.positions = attngen::make_tensor(positions, attngen::dtype::i32, {4});
  a.output = attngen::make_tensor(output, {1, count, H, D});
  a.lse = attngen::make_tensor(lse, {1, H, count});
  return kernel::run(a);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Causal attention's flops: two products of L x L x D per head, half of them masked.
double causal_flops(std::int64_t L) { return 4.0 * H * double(L) * double(L) * D / 2; }

int run_single(std::int64_t L, int repeats) {
  const auto q = random_rows(L, H, 1), k = random_rows(L, KVH, 2), v = random_rows(L, KVH, 3);
  std::vector<float> output(std::size_t(L * H * D)), lse(std::size_t(H * L));
  std::vector<double> seconds;
  for (int r = 0; r <= repeats; ++r) {
    const double start = MPI_Wtime();
    if (attngen::status s = run_whole(q, k, v, L, 0, L, output.data(), lse.data()); !s) {
      std::fprintf(stderr, "kernel failed: %s\n", s.message().c_str());
      return 1;
    }
    if (r > 0) seconds.push_back(MPI_Wtime() - start);  // the first call warms the caches and threads
  }
  const double t = median(seconds);
  std::printf("single: L=%lld median_ms=%.2f gflops=%.1f\n", static_cast<long long>(L), t * 1e3,
              causal_flops(L) / t / 1e9);
  return 0;
}

int run_ring(std::int64_t L, int repeats, int rank, int ranks) {
  const auto q = random_rows(L, H, 1), k = random_rows(L, KVH, 2), v = random_rows(L, KVH, 3);
  const auto chunks = attngen::ring_chunks(L, ranks, rank, attngen::ring_split::balanced);
  std::int64_t rows = 0;
  for (const auto& c : chunks) rows += c.length;
  std::vector<float> my_q = rows_of(q, H, chunks), my_k = rows_of(k, KVH, chunks), my_v = rows_of(v, KVH, chunks);
  std::vector<float> output(std::size_t(rows * H * D)), lse(std::size_t(H * rows));
  attngen::ring_args a;
  a.q = attngen::make_tensor(my_q.data(), {1, rows, H, D});
  a.k = attngen::make_tensor(my_k.data(), {1, rows, KVH, D});
  a.v = attngen::make_tensor(my_v.data(), {1, rows, KVH, D});
  a.output = attngen::make_tensor(output.data(), {1, rows, H, D});
  a.lse = attngen::make_tensor(lse.data(), {1, H, rows});
  a.query_total = a.key_total = L;
  a.split = attngen::ring_split::balanced;

  std::vector<attngen::ring_timings> runs;
  for (int r = 0; r <= repeats; ++r) {
    attngen::ring_timings timings;
    MPI_Barrier(MPI_COMM_WORLD);
    if (attngen::status s = attngen::ring_attention(MPI_COMM_WORLD, attngen::ring_kernel_of<kernel>(), a, &timings); !s) {
      std::fprintf(stderr, "rank %d: ring_attention failed: %s\n", rank, s.message().c_str());
      return 1;
    }
    if (r > 0) runs.push_back(timings);
  }

  // 16 sampled rows per rank, each against the single-process kernel on that query alone.
  std::mt19937 rng(std::uint32_t(100 + rank));
  double max_error = 0;
  std::vector<float> row(std::size_t(H * D));
  std::vector<float> row_lse(static_cast<std::size_t>(H));
  for (int n = 0; n < 16 && rows > 0; ++n) {
    const std::int64_t local = n == 0 ? 0 : n == 1 ? rows - 1 : std::int64_t(rng() % std::uint64_t(rows));
    std::int64_t global = 0, before = 0;
    for (const auto& c : chunks) {
      if (local < before + c.length) {
        global = c.start + (local - before);
        break;
      }
      before += c.length;
    }
    if (attngen::status s = run_whole(q, k, v, L, global, 1, row.data(), row_lse.data()); !s) return 1;
    for (std::int64_t x = 0; x < H * D; ++x)
      max_error = std::max(max_error, double(std::fabs(row[std::size_t(x)] - output[std::size_t(local * H * D + x)])));
  }
  double worst_error = 0;
  MPI_Allreduce(&max_error, &worst_error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  // The same transfers alone: each step's slice sent round the ring with nothing to compute.
  const std::int64_t token_bytes = KVH * 2 * D * std::int64_t(sizeof(float));
  auto slice_bytes = [&](int holder) {
    std::int64_t tokens = 0;
    for (const auto& c : attngen::ring_chunks(L, ranks, holder, attngen::ring_split::balanced)) tokens += c.length;
    return tokens * token_bytes;
  };
  std::int64_t capacity = 0;
  for (int r = 0; r < ranks; ++r) capacity = std::max(capacity, slice_bytes(r));
  std::vector<char> send(static_cast<std::size_t>(capacity)), receive(static_cast<std::size_t>(capacity));
  std::vector<double> transfer(std::size_t(ranks), 0.0);
  for (int step = 0; step + 1 < ranks; ++step) {
    const int holder = (rank - step + ranks) % ranks, incoming = (holder + ranks - 1) % ranks;
    const double start = MPI_Wtime();
    MPI_Sendrecv(send.data(), int(slice_bytes(holder)), MPI_BYTE, (rank + 1) % ranks, 0, receive.data(),
                 int(slice_bytes(incoming)), MPI_BYTE, (rank + ranks - 1) % ranks, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    transfer[std::size_t(step)] = MPI_Wtime() - start;
  }

  // The median run's steps, the slowest rank's time in each.
  std::vector<double> totals;
  for (const auto& t : runs) totals.push_back(t.total_seconds);
  const double total = median(totals);
  const auto& chosen = *std::find_if(runs.begin(), runs.end(), [&](const auto& t) { return t.total_seconds == total; });
  std::vector<double> mine, slowest(std::size_t(3 * ranks));
  for (int step = 0; step < ranks; ++step)
    for (double value : {chosen.steps[std::size_t(step)].compute_seconds, chosen.steps[std::size_t(step)].wait_seconds,
                         transfer[std::size_t(step)]})
      mine.push_back(value);
  MPI_Reduce(mine.data(), slowest.data(), 3 * ranks, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  double slowest_total = 0;
  MPI_Reduce(&total, &slowest_total, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("checked 16 rows per rank against the single-process kernel: max abs error %.2e (tolerance 1e-5)\n",
                worst_error);
    std::printf("step  compute ms  exposed wait ms  transfer alone ms  hidden\n");
    for (int step = 0; step < ranks; ++step) {
      const double compute = slowest[std::size_t(3 * step)], wait = slowest[std::size_t(3 * step + 1)],
                   alone = slowest[std::size_t(3 * step + 2)];
      // The last step receives nothing: no transfer to hide.
      if (step + 1 == ranks) {
        std::printf("%4d  %10.2f  %15.3f  %17s  %6s\n", step, compute * 1e3, wait * 1e3, "-", "-");
        continue;
      }
      const double hidden = alone > 0 ? std::clamp(1.0 - wait / alone, 0.0, 1.0) : 1.0;
      std::printf("%4d  %10.2f  %15.3f  %17.3f  %5.0f%%\n", step, compute * 1e3, wait * 1e3, alone * 1e3, hidden * 100);
    }
    std::printf("ring: ranks=%d L=%lld median_ms=%.2f gflops=%.1f\n", ranks, static_cast<long long>(L),
                slowest_total * 1e3, causal_flops(L) / slowest_total / 1e9);
  }
  if (!(worst_error <= 1e-5)) {
    if (rank == 0) std::fprintf(stderr, "FAILED: error above tolerance\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int first = 1;
  const bool single = argc > 1 && std::strcmp(argv[1], "--single") == 0;
  if (single) first = 2;
  const std::int64_t L = argc > first ? std::atoll(argv[first]) : 4096;
  const int repeats = argc > first + 1 ? std::atoi(argv[first + 1]) : 3;
  const int result = single ? run_single(L, repeats) : run_ring(L, repeats, rank, ranks);
  MPI_Finalize();
  return result;
}
