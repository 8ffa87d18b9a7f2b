// A continuous-batching loop in the shape of an inference engine, over the generated paged-KV kernel:
// requests arrive with a prompt, join the batch when it has a slot and the pool has pages for them,
// generate one token per step and leave when done, their pages going back to the pool for later
// joins. Each step appends the new tokens' keys and values to the bf16 cache (attngen::append_kv) and
// makes one attention call for the whole batch, joining prompts and decode queries together; sampled
// rows are checked against float64. Queries, keys and values are random: the loop is an engine's, the
// numbers are not a model's. Usage: kv_cache_decode [steps] [threads]
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <utility>
#include <vector>

#include "paged_decode.hpp"

namespace {

using kernel = example::paged_decode;
constexpr attngen::attention_desc desc = kernel::description;
constexpr int H = desc.num_heads;
constexpr int KVH = desc.effective_kv_heads();
constexpr int D = desc.qk_head_dim;
constexpr int page_size = desc.kv_page_size;
constexpr int token_floats = KVH * D;  // one token's keys, or its values

// The traffic, made up: prompt lengths, tokens each request generates, up to two arrivals a step.
constexpr int min_prompt = 8, max_prompt = 120;
constexpr int min_generated = 2, max_generated = 24;
constexpr int max_arrivals_per_step = 2;
// The engine: up to max_batch sequences a call, and a pool that cannot hold max_batch sequences at
// their longest, so that requests sometimes wait for pages, as they do in an engine.
constexpr int max_batch = 16;
constexpr int num_pages = 80;

constexpr int pages_for(int tokens) { return (tokens + page_size - 1) / page_size; }

// A page table row: room for the longest sequence.
constexpr int max_pages = pages_for(max_prompt + max_generated - 1);

// x rounded to bfloat16, to nearest even, as append_kv stores it (x is finite).
float rounded_to_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  return std::bit_cast<float>((bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u);
}

// The pool's free pages. A page given back is the next handed out, so later joins reuse the pages of
// sequences that left, in no particular order.
class page_allocator {
 public:
  explicit page_allocator(int pages) : handed_out_before_(pages, false) {
    for (int page = pages - 1; page >= 0; --page) free_.push_back(page);
  }

  // The caller has checked that a page is free (admission reserves every page a sequence will need).
  int allocate() {
    const int page = free_.back();
    free_.pop_back();
    reuses_ += handed_out_before_[page];
    handed_out_before_[page] = true;
    return page;
  }
  void release(const std::vector<int>& pages) { free_.insert(free_.end(), pages.rbegin(), pages.rend()); }

  int free_pages() const { return int(free_.size()); }
  int reuses() const { return reuses_; }

 private:
  std::vector<int> free_;
  std::vector<bool> handed_out_before_;
  int reuses_ = 0;
};

// The K and V pools, (num_pages, page_size, KVH, D) bf16, and their free pages.
struct paged_cache {
  std::vector<std::uint16_t> k_pool, v_pool;
  page_allocator pages{num_pages};

  paged_cache() : k_pool(std::size_t(num_pages) * page_size * token_floats), v_pool(k_pool.size()) {}
  attngen::tensor_view k_view() { return pool_view(k_pool); }
  attngen::tensor_view v_view() { return pool_view(v_pool); }

 private:
  static attngen::tensor_view pool_view(std::vector<std::uint16_t>& pool) {
    return attngen::make_tensor(pool.data(), attngen::dtype::bf16, {num_pages, page_size, KVH, D});
  }
};

// A request: its prompt, how many tokens it generates, its pages, and its keys and values as the
// cache holds them (bf16 values in float, (tokens, KVH, D)), from which the reference computes.
struct sequence {
  int prompt_length = 0;
  int tokens_to_generate = 0;
  int generated = 0;
  std::vector<int> pages;
  std::vector<float> keys, values;

  int length() const { return int(keys.size()) / token_floats; }
  // The prompt and every generated token but the last, which is never fed back.
  int final_length() const { return prompt_length + tokens_to_generate - 1; }
  // Tokens a step appends and queries: the prompt when joining, then the token generated last.
  int new_tokens() const { return generated == 0 ? prompt_length : 1; }
};

// Requests waiting and sequences running, admitted first come first served.
class scheduler {
 public:
  explicit scheduler(std::mt19937& rng) : rng_(rng) {}

  void take_arrivals() {
    std::uniform_int_distribution<int> arrivals(0, max_arrivals_per_step), prompt(min_prompt, max_prompt),
        generated(min_generated, max_generated);
    for (int n = arrivals(rng_); n > 0; --n)
      waiting_.push_back({.prompt_length = prompt(rng_), .tokens_to_generate = generated(rng_)});
  }

  // Pages are taken as sequences grow but reserved for their whole life at admission, so a running
  // sequence never finds the pool empty (an engine that reserves less must preempt). Returns the joins.
  int admit() {
    int joined = 0;
    for (; !waiting_.empty() && int(running_.size()) < max_batch &&
           reserved_pages() + pages_for(waiting_.front().final_length()) <= num_pages;
         ++joined) {
      running_.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
    return joined;
  }

  // Every running sequence generated a token this step (a joining one from its prompt's last query);
  // those done leave and give their pages back. Returns how many left.
  int finish_step(page_allocator& pages) {
    for (sequence& s : running_) ++s.generated;
    const auto leaving = std::stable_partition(running_.begin(), running_.end(),
                                               [](const sequence& s) { return s.generated < s.tokens_to_generate; });
    for (auto s = leaving; s != running_.end(); ++s) pages.release(s->pages);
    const int left = int(running_.end() - leaving);
    running_.erase(leaving, running_.end());
    return left;
  }

  std::vector<sequence>& running() { return running_; }
  int waiting() const { return int(waiting_.size()); }

 private:
  int reserved_pages() const {
    int pages = 0;
    for (const sequence& s : running_) pages += pages_for(s.final_length());
    return pages;
  }

  std::mt19937& rng_;
  std::deque<sequence> waiting_;
  std::vector<sequence> running_;
};

// One step's call: the running sequences' new tokens packed in batch order, with the bookkeeping
// append_kv and the kernel read.
struct step_batch {
  std::vector<std::int32_t> offsets;     // (B + 1): sequence b's new tokens (and queries) start at row offsets[b]
  std::vector<std::int32_t> page_table;  // (B, max_pages), -1 past a sequence's pages
  std::vector<std::int32_t> kv_lengths;  // (B): keys held before the append; after it, keys attended
  std::vector<float> k, v;               // (rows, KVH, D): the new tokens' keys and values
  std::vector<float> q, out;             // (rows, H, D)

  std::int64_t sequences() const { return std::int64_t(kv_lengths.size()); }
  std::int64_t rows() const { return offsets.back(); }
};

void append_random(std::vector<float>& to, std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t n = 0; n < count; ++n) to.push_back(uniform(rng));
}

// Gives each running sequence the pages its new tokens need, draws their keys, values and queries,
// and records the keys and values as the cache will hold them.
step_batch make_batch(std::vector<sequence>& running, page_allocator& pages, std::mt19937& rng) {
  step_batch batch;
  batch.offsets.push_back(0);
  for (sequence& s : running) {
    const int tokens = s.new_tokens();
    while (int(s.pages.size()) < pages_for(s.length() + tokens)) s.pages.push_back(pages.allocate());
    batch.kv_lengths.push_back(s.length());
    batch.offsets.push_back(batch.offsets.back() + tokens);
    for (int p = 0; p < max_pages; ++p) batch.page_table.push_back(p < int(s.pages.size()) ? s.pages[p] : -1);
    const std::size_t first = batch.k.size();
    append_random(batch.k, std::size_t(tokens) * token_floats, rng);
    append_random(batch.v, std::size_t(tokens) * token_floats, rng);
    for (std::size_t n = first; n < batch.k.size(); ++n) {
      s.keys.push_back(rounded_to_bf16(batch.k[n]));
      s.values.push_back(rounded_to_bf16(batch.v[n]));
    }
  }
  append_random(batch.q, std::size_t(batch.rows()) * H * D, rng);
  batch.out.assign(batch.q.size(), 0.0f);
  return batch;
}

attngen::kv_append_args append_args(step_batch& batch, paged_cache& cache) {
  const std::int64_t B = batch.sequences(), rows = batch.rows();
  attngen::kv_append_args a;
  a.k = attngen::make_tensor(batch.k.data(), {rows, KVH, D});
  a.v = attngen::make_tensor(batch.v.data(), {rows, KVH, D});
  a.new_offsets = attngen::make_tensor(batch.offsets.data(), attngen::dtype::i32, {B + 1});
  a.k_cache = cache.k_view();
  a.v_cache = cache.v_view();
  a.page_table = attngen::make_tensor(batch.page_table.data(), attngen::dtype::i32, {B, max_pages});
  a.kv_lengths = attngen::make_tensor(batch.kv_lengths.data(), attngen::dtype::i32, {B});
  return a;
}

attngen::attention_args attention_args(step_batch& batch, paged_cache& cache) {
  const std::int64_t B = batch.sequences(), rows = batch.rows();
  attngen::attention_args a;
  a.q = attngen::make_tensor(batch.q.data(), {rows, H, D});
  a.q_offsets = attngen::make_tensor(batch.offsets.data(), attngen::dtype::i32, {B + 1});
  a.k = cache.k_view();
  a.v = cache.v_view();
  a.page_table = attngen::make_tensor(batch.page_table.data(), attngen::dtype::i32, {B, max_pages});
  a.kv_lengths = attngen::make_tensor(batch.kv_lengths.data(), attngen::dtype::i32, {B});
  a.output = attngen::make_tensor(batch.out.data(), {rows, H, D});
  return a;
}

// Head h's output for the query at `position` in sequence s, in float64 from the definition:
// bottom-right causal, the query sees keys 0 to position; GQA, head h reads kv head h / (H / KVH).
std::vector<double> expected_row(const sequence& s, const float* q, int position, int h) {
  const int g = h / (H / KVH);
  std::vector<double> scores(position + 1);
  double max_score = -INFINITY;
  for (int j = 0; j <= position; ++j) {
    double dot = 0;
    for (int x = 0; x < D; ++x) dot += double(q[x]) * s.keys[(std::size_t(j) * KVH + g) * D + x];
    scores[j] = dot / std::sqrt(double(D));
    max_score = std::max(max_score, scores[j]);
  }
  double sum = 0;
  for (double& score : scores) sum += (score = std::exp(score - max_score));
  std::vector<double> row(D, 0.0);
  for (int j = 0; j <= position; ++j)
    for (int x = 0; x < D; ++x) row[x] += scores[j] / sum * s.values[(std::size_t(j) * KVH + g) * D + x];
  return row;
}

// The largest error over sampled rows: each sequence's last query and, for a prompt, a random one
// of its queries too (where causality matters most), each in a few random heads.
double max_error_of(const step_batch& batch, const std::vector<sequence>& running, std::mt19937& rng) {
  constexpr int checked_heads = 4;
  double max_error = 0;
  for (std::size_t b = 0; b < running.size(); ++b) {
    const int queries = batch.offsets[b + 1] - batch.offsets[b];
    std::vector<int> sampled{queries - 1};
    if (queries > 1) sampled.push_back(int(rng() % queries));
    for (int i : sampled)
      for (int n = 0; n < checked_heads; ++n) {
        const int h = int(rng() % H);
        const std::size_t first = (std::size_t(batch.offsets[b] + i) * H + h) * D;
        const int position = running[b].length() - queries + i;  // bottom-right: the queries end the sequence
        const auto expected = expected_row(running[b], &batch.q[first], position, h);
        for (int x = 0; x < D; ++x) {
          const float got = batch.out[first + x];
          max_error = std::max(max_error, std::isfinite(got) ? std::fabs(expected[x] - got) : INFINITY);
        }
      }
  }
  return max_error;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 64;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  attngen::set_num_threads(threads);
  // The reference reads the bf16 values the cache holds, so only float32 accumulation separates it
  // from the kernel: 1e-4 on outputs in [-1, 1] is ample and still catches a wrong key or page.
  const double tolerance = 1e-4;

  std::mt19937 rng(2024);
  paged_cache cache;
  scheduler engine(rng);
  long generated_tokens = 0, prompt_tokens = 0, decode_only_tokens = 0;
  double attention_seconds = 0, decode_only_seconds = 0, max_error = 0;
  for (int step = 0; step < steps; ++step) {
    engine.take_arrivals();
    const int joined = engine.admit();
    std::vector<sequence>& running = engine.running();
    if (running.empty()) {
      std::printf("step %3d: idle\n", step);
      continue;
    }
    for (const sequence& s : running) prompt_tokens += s.generated == 0 ? s.prompt_length : 0;

    step_batch batch = make_batch(running, cache.pages, rng);
    const int pages_in_use = num_pages - cache.pages.free_pages();
    if (attngen::status s = attngen::append_kv(desc, append_args(batch, cache)); !s) {
      std::fprintf(stderr, "FAILED: step %d: append_kv: %s\n", step, s.message().c_str());
      return 1;
    }
    const attngen::attention_args args = attention_args(batch, cache);
    const auto start = std::chrono::steady_clock::now();
    const attngen::status status = kernel::run(args);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!status) {
      std::fprintf(stderr, "FAILED: step %d: kernel: %s\n", step, status.message().c_str());
      return 1;
    }

    const double error = max_error_of(batch, running, rng);
    max_error = std::max(max_error, error);
    long keys = 0;
    for (std::int32_t k : batch.kv_lengths) keys += k;
    const int sequences = int(running.size());
    generated_tokens += sequences;
    attention_seconds += seconds;
    // A step without a prompt is pure decode: one query per sequence, the speed engines quote.
    if (batch.rows() == sequences) {
      decode_only_tokens += sequences;
      decode_only_seconds += seconds;
    }
    const int left = engine.finish_step(cache.pages);
    std::printf(
        "step %3d: %2d sequences (+%d joined, -%d left, %d waiting), %4ld queries over %5ld keys, "
        "%2d/%d pages in use, max error %.1e\n",
        step, sequences, joined, left, engine.waiting(), long(batch.rows()), keys, pages_in_use, num_pages, error);
    if (!(error <= tolerance)) {
      std::fprintf(stderr, "FAILED: step %d: error %.2e above tolerance %.0e\n", step, error, tolerance);
      return 1;
    }
  }

  std::printf("checked sampled rows of every step against float64: max abs error %.2e (tolerance %.0e)\n", max_error,
              tolerance);
  std::printf("%d pages of %d tokens: %d handed out again after their sequence left\n", num_pages, page_size,
              cache.pages.reuses());
  std::printf("%s: H=%d KVH=%d D=%d, bf16 cache, %d threads, timing the attention calls alone:\n", kernel::name, H, KVH,
              D, threads);
  std::printf("  all steps: %ld prompt tokens prefilled and %ld tokens generated in %.1f ms: %.0f generated tokens/s\n",
              prompt_tokens, generated_tokens, attention_seconds * 1e3, generated_tokens / attention_seconds);
  if (decode_only_tokens > 0)
    std::printf("  steps without a prompt: %ld tokens generated in %.1f ms: %.0f tokens/s\n", decode_only_tokens,
                decode_only_seconds * 1e3, decode_only_tokens / decode_only_seconds);
  return 0;
}
