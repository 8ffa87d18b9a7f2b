#include "cache_cases.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include <unistd.h>

#include "random_data.hpp"
#include "timing.hpp"

namespace attngen::bench {

namespace {

// `elements` random values of `type`: uniform in [-1, 1) as random_data.hpp writes them (f32, bf16),
// or int8 codes in [-127, 127].
std::vector<std::uint8_t> random_elements(std::size_t elements, dtype type, std::mt19937& rng) {
  if (type == dtype::f16) throw std::invalid_argument("attngen-bench: no random f16 data");
  std::vector<std::uint8_t> bytes(elements * size_of(type));
  if (type != dtype::i8) {
    fill_uniform(bytes.data(), elements, type, rng);
    return bytes;
  }
  for (std::uint8_t& code : bytes) code = std::uint8_t(int(rng() % 255) - 127);
  return bytes;
}

// Positive int8 scales around 1/127: the codes then span about [-1, 1], as the float caches do.
std::vector<float> random_scales(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> scale(0.5f / 127, 1.5f / 127);
  std::vector<float> scales(count);
  for (float& s : scales) s = scale(rng);
  return scales;
}

// One copy of a batch's keys and values, with their scales when int8.
struct kv_copy {
  std::vector<std::uint8_t> k, v;
  std::vector<float> k_scale, v_scale;
};

// A batch's tensors as a serving engine holds them: queries packed (ragged) or (B, Lq, H, D); keys
// and values in the layouts of the shape contract, token by token (a token's row holds every kv
// head): a paged pool of exactly the pages the sequences need, handed out in a shuffled order, or a
// dense cache of `key_capacity` keys per sequence. At least `copies` copies of the keys and values,
// and together at least twice the last-level cache (260 MiB on some Xeons), are cycled between
// calls, so that each call reads them from DRAM.
class cache_batch {
 public:
  cache_batch(const attention_desc& desc, const std::vector<sequence_size>& sequences, int key_capacity, int copies,
              std::mt19937& rng)
      : desc_(desc),
        sequences_(sequences),
        B_(std::int64_t(sequences.size())),
        H_(desc.num_heads),
        KVH_(desc.effective_kv_heads()),
        D_(desc.qk_head_dim),
        Dv_(desc.effective_v_head_dim()),
        key_capacity_(key_capacity) {
    q_offsets_.push_back(0);
    for (const sequence_size& s : sequences) {
      q_offsets_.push_back(q_offsets_.back() + s.queries);
      kv_lengths_.push_back(s.keys);
    }
    const std::int64_t total_queries = q_offsets_.back();
    q_ = random_elements(std::size_t(total_queries * H_ * D_), desc.element_type, rng);
    output_.resize(std::size_t(total_queries * H_ * Dv_) * size_of(desc.element_type));
    if (desc.is_paged()) number_pages(rng);
    // The cache's rows: its pages', or every sequence's key capacity.
    const std::int64_t tokens = desc.is_paged() ? pages_ * desc.kv_page_size : B_ * key_capacity_;
    const dtype kv = desc.effective_kv_element();
    const std::int64_t copy_bytes = tokens * KVH_ * (D_ + Dv_) * size_of(kv);
    const long last_level_cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (last_level_cache > 0 && copy_bytes > 0)
      copies = int(std::max<std::int64_t>(copies, (2 * std::int64_t(last_level_cache) + copy_bytes - 1) / copy_bytes));
    for (int n = 0; n < copies; ++n) {
      kv_copy& c = copies_.emplace_back();
      c.k = random_elements(std::size_t(tokens * KVH_ * D_), kv, rng);
      c.v = random_elements(std::size_t(tokens * KVH_ * Dv_), kv, rng);
      if (desc.has_kv_scales()) {
        c.k_scale = random_scales(std::size_t(tokens * KVH_), rng);
        c.v_scale = random_scales(std::size_t(tokens * KVH_), rng);
      }
    }
  }

  std::size_t size() const { return sequences_.size(); }
  int copies() const { return int(copies_.size()); }

  /// The call of the whole batch, reading copy `copy` of the keys and values.
  attention_args args(int copy) {
    const dtype t = desc_.element_type, kv = desc_.effective_kv_element();
    kv_copy& c = copies_[std::size_t(copy)];
    const std::int64_t total_queries = q_offsets_.back();
    attention_args a;
    if (desc_.is_ragged()) {
      a.q = make_tensor(q_.data(), t, {total_queries, H_, D_});
      a.q_offsets = make_tensor(q_offsets_.data(), dtype::i32, {B_ + 1});
      a.output = make_tensor(output_.data(), t, {total_queries, H_, Dv_});
    } else {
      a.q = make_tensor(q_.data(), t, {B_, total_queries / B_, H_, D_});
      a.output = make_tensor(output_.data(), t, {B_, total_queries / B_, H_, Dv_});
    }
    if (desc_.has_kv_lengths()) a.kv_lengths = make_tensor(kv_lengths_.data(), dtype::i32, {B_});
    if (desc_.is_paged()) {
      const std::int64_t P = desc_.kv_page_size;
      a.page_table = make_tensor(page_table_.data(), dtype::i32, {B_, max_pages_});
      a.k = pool_view(c.k.data(), kv, D_);
      a.v = pool_view(c.v.data(), kv, Dv_);
      if (desc_.has_kv_scales()) {
        a.k_scale = make_tensor(c.k_scale.data(), {pages_, P, KVH_});
        a.v_scale = make_tensor(c.v_scale.data(), {pages_, P, KVH_});
      }
    } else {
      a.k = make_tensor(c.k.data(), kv, {B_, key_capacity_, KVH_, D_});
      a.v = make_tensor(c.v.data(), kv, {B_, key_capacity_, KVH_, Dv_});
      if (desc_.has_kv_scales()) {
        a.k_scale = make_tensor(c.k_scale.data(), {B_, key_capacity_, KVH_});
        a.v_scale = make_tensor(c.v_scale.data(), {B_, key_capacity_, KVH_});
      }
    }
    return a;
  }

  /// Sequence b alone as a dense kernel takes it, (1, Lq_b, H, D) queries and the (1, Lk_b, KVH, D)
  /// keys of its cache row: views of the batch's tensors (a dense cache of float elements).
  attention_args sequence_args(std::size_t b, int copy) {
    const dtype t = desc_.element_type, kv = desc_.effective_kv_element();
    kv_copy& c = copies_[std::size_t(copy)];
    const std::int64_t first = q_offsets_[b], queries = sequences_[b].queries, keys = sequences_[b].keys;
    const std::int64_t row = std::int64_t(b) * KVH_ * key_capacity_;
    attention_args a;
    a.q = make_tensor(q_.data() + first * H_ * D_ * size_of(t), t, {1, queries, H_, D_});
    a.output = make_tensor(output_.data() + first * H_ * Dv_ * size_of(t), t, {1, queries, H_, Dv_});
    a.k = make_tensor(c.k.data() + row * D_ * size_of(kv), kv, {1, keys, KVH_, D_});
    a.v = make_tensor(c.v.data() + row * Dv_ * size_of(kv), kv, {1, keys, KVH_, Dv_});
    return a;
  }

 private:
  // Gives each sequence the pages its keys need, from the pool's pages in a shuffled order.
  void number_pages(std::mt19937& rng) {
    const int P = desc_.kv_page_size;
    for (const sequence_size& s : sequences_) {
      const std::int64_t pages = (s.keys + P - 1) / P;
      pages_ += pages;
      max_pages_ = std::max(max_pages_, pages);
    }
    std::vector<std::int32_t> order(static_cast<std::size_t>(pages_));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    page_table_.assign(std::size_t(B_ * max_pages_), 0);
    std::size_t next = 0;
    for (std::int64_t b = 0; b < B_; ++b)
      for (std::int64_t p = 0; p * P < sequences_[std::size_t(b)].keys; ++p)
        page_table_[std::size_t(b * max_pages_ + p)] = order[next++];
  }

  // A pool (pages, page_size, KVH, dim), dense.
  tensor_view pool_view(void* data, dtype type, std::int64_t dim) const {
    return make_tensor(data, type, {pages_, std::int64_t(desc_.kv_page_size), KVH_, dim});
  }

  attention_desc desc_;
  std::vector<sequence_size> sequences_;
  std::int64_t B_, H_, KVH_, D_, Dv_;
  std::int64_t key_capacity_;        ///< a dense cache's keys per sequence
  std::int64_t pages_ = 0, max_pages_ = 0;  ///< a paged pool's pages, and the most a sequence has
  std::vector<std::uint8_t> q_, output_;
  std::vector<std::int32_t> q_offsets_, kv_lengths_, page_table_;
  std::vector<kv_copy> copies_;
};

// Median seconds of `call(copy)`, cycling the case's copies of its caches; -1 when a call fails (the
// first failure's message on stderr, named by `what`).
template <typename Call>
double cycled_median_seconds(const cache_batch& batch, const std::string& what, Call call) {
  bool failed = false;
  const double seconds = median_seconds([&](int n) {
    const status s = call(n % batch.copies());
    if (!s && !failed) std::fprintf(stderr, "%s: %s\n", what.c_str(), s.message().c_str());
    failed = failed || !s;
  });
  return failed ? -1.0 : seconds;
}

// Appends "what value (target relation bound: verdict)" to the report.
void add_target(target_report& r, const char* what, double value, const char* relation, double bound, bool met) {
  char text[160];
  std::snprintf(text, sizeof text, "%s%s %.3f (target %s %.2f: %s)", r.line.empty() ? "" : "; ", what, value,
                relation, bound, std::isnan(value) ? "not measured" : met ? "met" : "missed");
  r.line += text;
  r.met = r.met && met;
  ++r.targets;
}
void at_least(target_report& r, const char* what, double value, double bound) {
  add_target(r, what, value, ">=", bound, value >= bound);
}
void at_most(target_report& r, const char* what, double value, double bound) {
  add_target(r, what, value, "<=", bound, value <= bound);
}
void above(target_report& r, const char* what, double value, double bound) {
  add_target(r, what, value, ">", bound, value > bound);
}
// A figure the issue expects without a target of its own.
void note(target_report& r, const char* what, double value, const char* expected) {
  char text[160];
  std::snprintf(text, sizeof text, "%s%s %.3f (%s)", r.line.empty() ? "" : "; ", what, value, expected);
  r.line += text;
}

}  // namespace

std::pair<double, double> time_cache_case(const bench_case& c, int threads) {
  set_num_threads(threads);
  const std::vector<sequence_size> sequences = c.sequences();
  const std::string compared = c.name + " (as " + c.compared_with + ")";
  std::mt19937 rng(1);
  double seconds = -1, compared_seconds = NAN;
  {
    cache_batch batch(c.desc, sequences, c.key_length, c.rotated_caches, rng);
    seconds = cycled_median_seconds(batch, c.name, [&](int copy) { return c.run(batch.args(copy)); });
    if (c.compared_run != nullptr && !c.compared_desc.has_sequence_lengths())
      compared_seconds = cycled_median_seconds(batch, compared, [&](int copy) {
        for (std::size_t b = 0; b < batch.size(); ++b)
          if (status s = c.compared_run(batch.sequence_args(b, copy)); !s) return s;
        return status();
      });
  }
  // A comparison over a cache of its own is built once the case's is freed.
  if (c.compared_run != nullptr && c.compared_desc.has_sequence_lengths()) {
    cache_batch other(c.compared_desc, sequences, c.key_length, c.rotated_caches, rng);
    compared_seconds = cycled_median_seconds(other, compared, [&](int copy) { return c.compared_run(other.args(copy)); });
  }
  return {seconds, compared_seconds};
}

cache_figures figures_of(const bench_case& c, const cache_times& times, const machine_limits& limits) {
  cache_figures f;
  f.seconds = times.seconds;
  f.gflops = c.flops() / times.seconds / 1e9;
  f.ratio_to_peak = f.gflops / limits.peak_gflops;
  f.gbps = c.bytes() / times.seconds / 1e9;
  f.triad_gbps = limits.triad_gbps;
  f.ratio_to_triad = f.gbps / limits.triad_gbps;
  double queries = 0;
  for (const sequence_size& s : c.sequences()) queries += s.queries;
  f.tokens_per_second = queries / times.seconds;
  f.tokens_per_second_over_f32 = f.tokens_per_second / times.f32_tokens_per_second;
  f.compared_seconds = times.compared_seconds;
  if (c.compared_run != nullptr) {
    double& ratio = c.compared_desc.has_sequence_lengths() ? f.paged_over_dense_time : f.ragged_over_separate_time;
    ratio = times.seconds / times.compared_seconds;
  }
  f.pytorch_padded_seconds = times.pytorch_padded_seconds;
  f.speedup_vs_pytorch_padded = times.pytorch_padded_seconds / times.seconds;
  return f;
}

std::string kv_dtype_name(const bench_case& c) {
  const dtype kv = c.desc.effective_kv_element();
  return kv == dtype::i8 ? "int8" : std::string(name_of(kv));
}

std::string cache_case_label(const bench_case& c) {
  return c.desc.kv_element_given ? c.name + " " + kv_dtype_name(c) : c.name;
}

target_report targets_of(const bench_case& c, const cache_figures& f) {
  target_report r;
  const dtype kv = c.desc.effective_kv_element();
  if (c.name == "decode_paged") {
    // Decoding reads its cache once: its speed is the cache's bytes at nearly the triad's bandwidth,
    // so smaller elements give proportionally more tokens.
    at_least(r, "of triad", f.ratio_to_triad, kv == dtype::f32 ? 0.85 : 0.80);
    if (kv == dtype::f32) at_most(r, "paged / dense time", f.paged_over_dense_time, 1.05);
    if (kv == dtype::bf16) note(r, "tokens/s over f32's", f.tokens_per_second_over_f32, "about 2 expected");
    if (kv == dtype::i8) note(r, "tokens/s over f32's", f.tokens_per_second_over_f32, "about 3.5 expected");
  } else if (c.name == "decode_speculative") {
    // Its rows per key read as many FLOPs per byte as the peak over the triad: either may bound it.
    note(r, "of triad", f.ratio_to_triad, "no target of its own");
    note(r, "of peak", f.ratio_to_peak, "no target of its own");
  } else if (c.name == "prefill_chunk") {
    at_least(r, "of peak", f.ratio_to_peak, 0.70);
  } else if (c.name == "ragged_prefill") {
    at_most(r, "time / separate dense calls", f.ragged_over_separate_time, 1.10);
    above(r, "speedup vs PyTorch padded", f.speedup_vs_pytorch_padded, 1.0);
  } else {
    note(r, "of triad", f.ratio_to_triad, "no target of its own");
  }
  if (c.name != "prefill_chunk" && c.name != "ragged_prefill") note(r, "triad GB/s", f.triad_gbps, "beside the case");
  r.line = cache_case_label(c) + ": " + r.line + "\n";
  return r;
}

}  // namespace attngen::bench
