// attngen-bench: times attngen's generated kernels on named cases against the machine's limits and
// the peers (oneDNN, PyTorch), all measured in the same run. Run it through scripts/bench, which
// sets the environment that is fair to the peers.
//
//   attngen-bench [--threads N] [--case NAME]... [--json FILE] [--no-peers]
//                 [--device cuda|opencl [--gpu-peak-tflops X]]

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache_cases.hpp"
#include "cases.hpp"
#include "device_timing.hpp"
#include "machine_limits.hpp"
#include "peer_onednn.hpp"
#include "random_data.hpp"
#include "timing.hpp"
#include "module_cases.hpp"
#include "train_cases.hpp"

#ifndef ATTNGEN_BENCH_PEER_DIR
#error "ATTNGEN_BENCH_PEER_DIR must name the directory of the PyTorch peer scripts"
#endif

namespace attngen::bench {

namespace {

struct options {
  int threads = int(std::thread::hardware_concurrency());
  std::vector<std::string> cases;
  std::string json_path;
  bool peers = true;
  device_kind device = device_kind::host;
  /// The GPU's fp32 CUDA-core peak; 67 TFLOP/s is the H100 SXM's (and the H200's).
  double gpu_peak_tflops = 67.0;
};

// The peers run with glibc keeping freed memory mapped (no mmap for large blocks, no trimming), so
// that their per-call buffers come back without page faults, as attngen's do from its own scratch
// cache (attngen runs as an app would, with glibc's defaults).
constexpr int peer_trim_threshold = std::numeric_limits<int>::max();

// For a peer measured in this process's child.
void keep_freed_memory_mapped() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, peer_trim_threshold);
}

// A peer script: in the source tree, or under $ATTNGEN_SOURCE_DIR/bench when the binary was carried
// to another machine; run by $ATTNGEN_PYTHON (default /usr/bin/python3), glibc keeping freed memory.
std::string peer_command(const char* script) {
  const char* python = std::getenv("ATTNGEN_PYTHON");
  const char* source = std::getenv("ATTNGEN_SOURCE_DIR");
  return "env MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=" + std::to_string(peer_trim_threshold) + " " +
         std::string(python ? python : "/usr/bin/python3") + " " +
         (source ? std::string(source) + "/bench" : std::string(ATTNGEN_BENCH_PEER_DIR)) + "/" + script;
}

// The first line a command prints, or nullopt when it fails.
std::optional<std::string> first_line_of(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  char line[1024] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  const int status = pclose(pipe);
  if (!got || status != 0) return std::nullopt;
  return std::string(line);
}

// What a measurement in a child process sends back.
struct child_report {
  double value = 0;      ///< seconds (or limits)
  double second = 0;     ///< a second value where needed
  double peak_rss_mb = 0;
  bool ok = false;
};

// Runs `work` in a child process (so its peak resident memory is its own), returning what it writes.
template <typename Work>
child_report in_child(Work work) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::pair<double, double> result = work();
    const double message[2] = {result.first, result.second};
    const bool written = write(fds[1], message, sizeof message) == ssize_t(sizeof message);
    _exit(written ? 0 : 1);
  }
  close(fds[1]);
  child_report report;
  double message[2];
  const bool got = read(fds[0], message, sizeof message) == ssize_t(sizeof message);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  report.ok = got && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  report.value = message[0];
  report.second = message[1];
  report.peak_rss_mb = usage.ru_maxrss / 1024.0;
  return report;
}

std::vector<std::uint8_t> random_tensor(std::size_t elements, dtype type, std::mt19937& rng) {
  std::vector<std::uint8_t> bytes(elements * size_of(type));
  fill_uniform(bytes.data(), elements, type, rng);
  return bytes;
}

// Times attngen's kernel on `c`; returns (median seconds, MiB of tensors allocated).
std::pair<double, double> time_attngen(const bench_case& c, int threads) {
  set_num_threads(threads);
  const auto& d = c.desc;
  const std::int64_t B = c.batch, Lq = c.query_length, Lk = c.key_length, H = d.num_heads,
                     KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  const dtype t = d.element_type;
  std::mt19937 rng(1);
  auto q = random_tensor(B * Lq * H * D, t, rng);
  std::vector<std::vector<std::uint8_t>> k, v;
  for (int n = 0; n < c.rotated_caches; ++n) {
    k.push_back(random_tensor(B * Lk * KVH * D, t, rng));
    v.push_back(random_tensor(B * Lk * KVH * Dv, t, rng));
  }
  std::vector<std::uint8_t> out(B * Lq * H * Dv * size_of(t));
  const double tensor_mib =
      (q.size() + out.size() + c.rotated_caches * (k[0].size() + v[0].size())) / double(1 << 20);
  // Every tensor lies (B, heads, L, D) in memory, as the peers' do (and many KV caches do), seen
  // through strided (B, L, heads, D) views.
  attention_args args;
  args.q = make_bhld_tensor(q.data(), t, {B, H, Lq, D});
  args.output = make_bhld_tensor(out.data(), t, {B, H, Lq, Dv});
  const std::vector<std::int32_t> documents = c.documents > 0 ? c.document_ids() : std::vector<std::int32_t>{};
  if (c.documents > 0) args.captures[0] = make_tensor(documents.data(), dtype::i32, {B, Lk});
  bool failed = false;
  const double seconds = median_seconds([&](int call) {
    const int cache = call % c.rotated_caches;
    args.k = make_bhld_tensor(k[cache].data(), t, {B, KVH, Lk, D});
    args.v = make_bhld_tensor(v[cache].data(), t, {B, KVH, Lk, Dv});
    if (status s = c.run(args); !s) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), s.message().c_str());
      failed = true;
    }
  });
  return {failed ? -1.0 : seconds, tensor_mib};
}

// Runs the PyTorch peer script; nullopt when torch is missing or the script fails.
std::optional<double> time_pytorch(const bench_case& c, int threads) {
  const auto& d = c.desc;
  const std::string command =
      peer_command("peer_pytorch.py") + " " + std::to_string(threads) + " " +
      std::to_string(c.batch) + " " + std::to_string(d.num_heads) + " " + std::to_string(d.effective_kv_heads()) +
      " " + std::to_string(d.qk_head_dim) + " " + std::to_string(d.effective_v_head_dim()) + " " +
      std::to_string(c.query_length) + " " + std::to_string(c.key_length) + " " + (c.causal() ? "1" : "0") + " " +
      std::string(name_of(d.element_type)) + " " + std::to_string(c.rotated_caches) + " 2>&1";
  const auto line = first_line_of(command);
  if (!line) return std::nullopt;
  return std::strtod(line->c_str(), nullptr);
}

// Runs the PyTorch peer on the padded batch of a case of ragged sequences (peer_pytorch_padded.py);
// nullopt when torch is missing or the script fails.
std::optional<double> time_pytorch_padded(const bench_case& c, int threads) {
  const auto& d = c.desc;
  std::string queries, keys;
  for (const sequence_size& s : c.sequences()) {
    queries += (queries.empty() ? "" : ",") + std::to_string(s.queries);
    keys += (keys.empty() ? "" : ",") + std::to_string(s.keys);
  }
  const char* causal = d.causal_mode == causal_alignment::bottom_right ? "bottom_right"
                       : d.is_causal()                                 ? "top_left"
                                                                       : "none";
  const std::string command = peer_command("peer_pytorch_padded.py") + " " + std::to_string(threads) + " " +
                              std::to_string(d.num_heads) + " " + std::to_string(d.effective_kv_heads()) + " " +
                              std::to_string(d.qk_head_dim) + " " + std::to_string(d.effective_v_head_dim()) + " " +
                              std::string(name_of(d.element_type)) + " " + causal + " " + queries + " " + keys +
                              " 2>/dev/null";
  const auto line = first_line_of(command);
  if (!line) return std::nullopt;
  return std::strtod(line->c_str(), nullptr);
}

options parse(int argc, char** argv) {
  options o;
  for (int n = 1; n < argc; ++n) {
    const std::string flag = argv[n];
    auto value = [&]() -> std::string {
      if (n + 1 >= argc) {
        std::fprintf(stderr, "attngen-bench: %s needs a value\n", flag.c_str());
        std::exit(2);
      }
      return argv[++n];
    };
    if (flag == "--threads") o.threads = std::atoi(value().c_str());
    else if (flag == "--case") o.cases.push_back(value());
    else if (flag == "--json") o.json_path = value();
    else if (flag == "--no-peers") o.peers = false;
    else if (flag == "--gpu-peak-tflops") o.gpu_peak_tflops = std::atof(value().c_str());
    else if (flag == "--device") {
      const std::string device = value();
      if (device != "cuda" && device != "opencl") {
        std::fprintf(stderr, "attngen-bench: --device takes cuda or opencl, not %s\n", device.c_str());
        std::exit(2);
      }
      o.device = device == "cuda" ? device_kind::cuda : device_kind::opencl;
    } else {
      std::fprintf(stderr,
                   "usage: attngen-bench [--threads N] [--case NAME]... [--json FILE] [--no-peers]\n"
                   "                     [--device cuda|opencl [--gpu-peak-tflops X]]\ncases:");
      std::vector<std::string> names;
      for (const auto& c : all_cases())
        if (std::find(names.begin(), names.end(), c.name) == names.end()) {
          names.push_back(c.name);
          std::fprintf(stderr, " %s", c.name.c_str());
        }
      std::fprintf(stderr, "\n");
      std::exit(flag == "--help" ? 0 : 2);
    }
  }
  return o;
}

std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

// The number after `"key":` in a one-line JSON object; nullopt when absent or null.
std::optional<double> json_field(const std::string& line, const std::string& key) {
  const std::size_t at = line.find("\"" + key + "\":");
  if (at == std::string::npos) return std::nullopt;
  const char* value = line.c_str() + at + key.size() + 3;
  char* end = nullptr;
  const double x = std::strtod(value, &end);
  if (end == value) return std::nullopt;
  return x;
}

// The string after `"key": "` in a one-line JSON object.
std::string json_text(const std::string& line, const std::string& key) {
  const std::string start = "\"" + key + "\": \"";
  const std::size_t at = line.find(start);
  if (at == std::string::npos) return "";
  const std::size_t from = at + start.size();
  return line.substr(from, line.find('"', from) - from);
}

// The GPU table: attngen's kernels on device tensors against PyTorch's scaled_dot_product_attention
// (math and flash backends) on the same GPU and shapes, in the same run.
int run_on_gpu(const options& o, const std::vector<const bench_case*>& selected, FILE* json) {
  const char* api = o.device == device_kind::cuda ? "cuda" : "opencl";
  const double peak = o.gpu_peak_tflops * 1e3;
  std::printf("device: %s, fp32 peak %.1f TFLOP/s (--gpu-peak-tflops; 67 is the H100 SXM CUDA cores')\n", api,
              o.gpu_peak_tflops);
  // Speedups are the peer's time over attngen's: above 1, attngen is faster.
  std::printf("%-20s %9s %8s %8s | %9s %7s | %9s %7s %s\n", "case", "ms", "TFLOP/s", "of peak", "math ms", "speedup",
              "flash ms", "speedup", "flash dtype");
  bool all_ok = true;
  for (const bench_case* c : selected) {
    if (c->has_sequence_lengths() || c->trains()) {
      std::printf("%-20s n/a: the KV-cache and training cases are generated for CPUs only\n",
                  cache_case_label(*c).c_str());
      continue;
    }
    const auto seconds = time_attngen_on_device(*c, o.device);
    if (!seconds) {
      std::printf("%-20s failed\n", c->name.c_str());
      all_ok = false;
      continue;
    }
    const double gflops = c->flops() / *seconds / 1e9;
    std::optional<std::string> peer;
    if (o.peers && o.device == device_kind::cuda && c->peers_compute_it) {
      const auto& d = c->desc;
      peer = first_line_of(peer_command("peer_pytorch_gpu.py") + " " + std::to_string(c->batch) + " " +
                           std::to_string(d.num_heads) + " " + std::to_string(d.effective_kv_heads()) + " " +
                           std::to_string(d.qk_head_dim) + " " + std::to_string(d.effective_v_head_dim()) + " " +
                           std::to_string(c->query_length) + " " + std::to_string(c->key_length) + " " +
                           (c->causal() ? "1" : "0") + " " + std::string(name_of(d.element_type)) + " " +
                           std::to_string(c->rotated_caches) + " 2>/dev/null");
    }
    const double math = peer ? json_field(*peer, "math_seconds").value_or(NAN) : NAN;
    const double flash = peer ? json_field(*peer, "flash_seconds").value_or(NAN) : NAN;
    const std::string flash_dtype = peer ? json_text(*peer, "flash_dtype") : "";
    // The peers run on CUDA devices only.
    auto peer_text = [&](double peer_seconds) {
      char text[48];
      const char* why = !o.peers ? "skipped" : o.device == device_kind::cuda ? "missing" : "n/a";
      if (std::isnan(peer_seconds)) std::snprintf(text, sizeof text, "%9s %7s", why, "");
      else std::snprintf(text, sizeof text, "%9.3f %6.2fx", peer_seconds * 1e3, peer_seconds / *seconds);
      return std::string(text);
    };
    std::printf("%-20s %9.3f %8.2f %7.1f%% | %s | %s %s\n", c->name.c_str(), *seconds * 1e3, gflops / 1e3,
                100 * gflops / peak, peer_text(math).c_str(), peer_text(flash).c_str(), flash_dtype.c_str());
    std::fflush(stdout);
    if (json) {
      const auto& d = c->desc;
      std::fprintf(json,
                   "{\"case\":\"%s\",\"device\":\"%s\",\"gpu\":\"%s\",\"B\":%d,\"H\":%d,\"KVH\":%d,\"D\":%d,"
                   "\"Dv\":%d,\"Lq\":%d,\"Lk\":%d,\"causal\":%s,\"dtype\":\"%s\",\"seconds_median\":%s,"
                   "\"gflops\":%s,\"peak_gflops\":%s,\"ratio_to_peak\":%s,\"pytorch_math_seconds\":%s,"
                   "\"speedup_vs_pytorch_math\":%s,\"pytorch_flash_seconds\":%s,\"pytorch_flash_dtype\":\"%s\","
                   "\"speedup_vs_pytorch_flash\":%s}\n",
                   c->name.c_str(), api, peer ? json_text(*peer, "device").c_str() : "", c->batch, d.num_heads,
                   d.effective_kv_heads(), d.qk_head_dim, d.effective_v_head_dim(), c->query_length, c->key_length,
                   c->causal() ? "true" : "false", std::string(name_of(d.element_type)).c_str(),
                   json_number(*seconds).c_str(), json_number(gflops).c_str(), json_number(peak).c_str(),
                   json_number(gflops / peak).c_str(), json_number(math).c_str(), json_number(math / *seconds).c_str(),
                   json_number(flash).c_str(), flash_dtype.c_str(), json_number(flash / *seconds).c_str());
    }
  }
  return all_ok ? 0 : 1;
}

// A JSON array of each sequence's query or key count.
std::string json_counts(const std::vector<sequence_size>& sequences, int sequence_size::*count) {
  std::string text;
  for (const sequence_size& s : sequences) text += (text.empty() ? "" : ",") + std::to_string(s.*count);
  return "[" + text + "]";
}

// A case whose sequences differ in length (cache_cases.hpp): its table row and JSON line, and its
// targets' line appended to `targets`. `f32_tokens` holds, by case name, the tokens per second over
// an f32 cache in this run, which the case's other caches are compared to.
bool run_cache_case(const bench_case& c, const options& o, const machine_limits& run_limits, FILE* json,
                    std::map<std::string, double>& f32_tokens, std::string& targets) {
  const std::string label = cache_case_label(c);
  // A shared VM's memory bandwidth drifts within minutes (2-core Xeon, 2026-12-04: triads of 23 and
  // 47 GB/s a minute apart), so a cache case is held to the triad measured beside it: the better of
  // one just before and one just after.
  auto triad_now = [&] { return in_child([&] { return std::pair{measure_triad_gbps(o.threads), 0.0}; }).value; };
  const double triad_before = triad_now();
  const child_report ours = in_child([&] { return time_cache_case(c, o.threads); });
  if (!ours.ok || ours.value <= 0) {
    std::printf("%-20s failed\n", label.c_str());
    return false;
  }
  machine_limits limits = run_limits;
  limits.triad_gbps = std::max(triad_before, triad_now());
  cache_times times{.seconds = ours.value, .compared_seconds = ours.second};
  // Ragged sequences are compared with PyTorch on the same sequences padded to one batch.
  const bool padded_peer = c.desc.is_ragged();
  std::string missing;
  if (o.peers && padded_peer) {
    if (const auto peer = time_pytorch_padded(c, o.threads)) times.pytorch_padded_seconds = *peer;
    else missing = "\"pytorch\"";
  }
  if (const auto f32 = f32_tokens.find(c.name); f32 != f32_tokens.end()) times.f32_tokens_per_second = f32->second;
  const cache_figures f = figures_of(c, times, limits);
  if (c.desc.effective_kv_element() == dtype::f32) f32_tokens[c.name] = f.tokens_per_second;
  const target_report report = targets_of(c, f);
  targets += report.line;

  // oneDNN computes no cache; PyTorch's column is the padded batch, its GFLOP/s the useful FLOPs.
  char pytorch[32];
  if (std::isnan(f.pytorch_padded_seconds))
    std::snprintf(pytorch, sizeof pytorch, "%9s %7s", !o.peers ? "skipped" : padded_peer ? "missing" : "n/a", "");
  else
    std::snprintf(pytorch, sizeof pytorch, "%9.1f %6.2fx", c.flops() / f.pytorch_padded_seconds / 1e9,
                  f.speedup_vs_pytorch_padded);
  std::printf("%-20s %9.3f %7.1f %7.0f%% %7.1f %9.0f | %9s %7s | %s\n", label.c_str(), f.seconds * 1e3, f.gflops,
              100 * f.ratio_to_peak, f.gbps, ours.peak_rss_mb, "n/a", "", pytorch);
  std::fflush(stdout);
  if (json) {
    const auto& d = c.desc;
    const std::vector<sequence_size> sequences = c.sequences();
    const std::string compared = c.compared_with.empty() ? "null" : "\"" + c.compared_with + "\"";
    const std::string page_size = d.is_paged() ? std::to_string(d.kv_page_size) : "null";
    std::fprintf(json,
                 "{\"case\":\"%s\",\"kv_dtype\":\"%s\",\"B\":%d,\"H\":%d,\"KVH\":%d,\"D\":%d,\"Dv\":%d,\"Lq\":%d,"
                 "\"Lk\":%d,\"query_lengths\":%s,\"kv_lengths\":%s,\"page_size\":%s,\"causal\":%s,\"dtype\":\"%s\","
                 "\"threads\":%d,\"seconds_median\":%s,\"gflops\":%s,\"peak_gflops\":%s,\"ratio_to_peak\":%s,"
                 "\"gbps\":%s,\"triad_gbps\":%s,\"ratio_to_triad\":%s,\"tokens_per_second\":%s,"
                 "\"tokens_per_second_over_f32\":%s,\"peak_rss_mib\":%s,\"compared_with\":%s,"
                 "\"compared_seconds\":%s,\"paged_over_dense_time\":%s,\"ragged_over_separate_time\":%s,"
                 "\"pytorch_padded_seconds\":%s,\"speedup_vs_pytorch_padded\":%s,\"missing_peers\":[%s],"
                 "\"targets_met\":%s}\n",
                 c.name.c_str(), kv_dtype_name(c).c_str(), c.batch, d.num_heads, d.effective_kv_heads(), d.qk_head_dim,
                 d.effective_v_head_dim(), c.query_length, c.key_length,
                 json_counts(sequences, &sequence_size::queries).c_str(),
                 json_counts(sequences, &sequence_size::keys).c_str(), page_size.c_str(),
                 c.causal() ? "true" : "false", std::string(name_of(d.element_type)).c_str(), o.threads,
                 json_number(f.seconds).c_str(), json_number(f.gflops).c_str(), json_number(limits.peak_gflops).c_str(),
                 json_number(f.ratio_to_peak).c_str(), json_number(f.gbps).c_str(),
                 json_number(limits.triad_gbps).c_str(), json_number(f.ratio_to_triad).c_str(),
                 json_number(f.tokens_per_second).c_str(), json_number(f.tokens_per_second_over_f32).c_str(),
                 json_number(ours.peak_rss_mb).c_str(), compared.c_str(), json_number(f.compared_seconds).c_str(),
                 json_number(f.paged_over_dense_time).c_str(), json_number(f.ragged_over_separate_time).c_str(),
                 json_number(f.pytorch_padded_seconds).c_str(), json_number(f.speedup_vs_pytorch_padded).c_str(),
                 missing.c_str(), report.targets == 0 ? "null" : report.met ? "true" : "false");
  }
  return true;
}

// A speedup for a targets line: "1.23x", or why there is none (the peers skipped or missing).
std::string speedup_text(double ratio, bool peers) {
  char text[16];
  if (std::isnan(ratio)) std::snprintf(text, sizeof text, "%s", peers ? "missing" : "skipped");
  else std::snprintf(text, sizeof text, "%.2fx", ratio);
  return text;
}

// A training case (train_cases.hpp): its row (forward + backward time; the backward's GFLOP/s, counted as
// backward_flops_factor x the forward's FLOPs, against the peak; PyTorch autograd's forward + backward),
// its JSON line, and its targets' line appended to `targets`.
bool run_training_case(const bench_case& c, const options& o, double peak, FILE* json, std::string& targets) {
  const child_report ours = in_child([&] {
    const training_times t = time_training(c, o.threads);
    return std::pair{t.forward_seconds, t.backward_seconds};
  });
  if (!ours.ok || ours.value <= 0 || ours.second <= 0) {
    std::printf("%-20s failed\n", c.name.c_str());
    return false;
  }
  const auto& d = c.desc;
  const double forward = ours.value, backward = ours.second, both = forward + backward;
  const double backward_flops = backward_flops_factor * c.flops();
  const double backward_gflops = backward_flops / backward / 1e9;
  const double step_gflops = (c.flops() + backward_flops) / both / 1e9;
  double pytorch_both = NAN, pytorch_backward = NAN, pytorch_rss = NAN;
  if (o.peers) {
    const std::string command = peer_command("peer_pytorch_train.py") + " " + std::to_string(o.threads) + " " +
                                std::to_string(c.batch) + " " + std::to_string(d.num_heads) + " " +
                                std::to_string(d.effective_kv_heads()) + " " + std::to_string(d.qk_head_dim) + " " +
                                std::to_string(d.effective_v_head_dim()) + " " + std::to_string(c.query_length) + " " +
                                std::to_string(c.key_length) + " " + (c.causal() ? "1" : "0") + " 2>/dev/null";
    if (const auto line = first_line_of(command);
        line && std::sscanf(line->c_str(), "%lf %lf %lf", &pytorch_both, &pytorch_backward, &pytorch_rss) != 3)
      pytorch_both = pytorch_backward = pytorch_rss = NAN;
  }
  const double speedup = pytorch_both / both;
  char pytorch[32];
  if (std::isnan(pytorch_both)) std::snprintf(pytorch, sizeof pytorch, "%9s %7s", o.peers ? "missing" : "skipped", "");
  else std::snprintf(pytorch, sizeof pytorch, "%9.1f %6.2fx", (c.flops() + backward_flops) / pytorch_both / 1e9, speedup);
  std::printf("%-20s %9.3f %7.1f %7.0f%% %7s %9.0f | %9s %7s | %s\n", c.name.c_str(), both * 1e3, step_gflops,
              100 * backward_gflops / peak, "", ours.peak_rss_mb, "n/a", "", pytorch);
  std::fflush(stdout);
  char line[400];
  std::snprintf(line, sizeof line,
                "%s: forward %.1f ms, backward %.1f ms at %.1f GFLOP/s = %.2f of peak (target >= 0.50); forward + "
                "backward %s PyTorch autograd (target >= 3x); peak RSS %.0f MiB (PyTorch's %s MiB)\n",
                c.name.c_str(), forward * 1e3, backward * 1e3, backward_gflops, backward_gflops / peak,
                speedup_text(speedup, o.peers).c_str(), ours.peak_rss_mb,
                std::isnan(pytorch_rss) ? "?" : std::to_string(int(pytorch_rss)).c_str());
  targets += line;
  if (json) {
    std::fprintf(json,
                 "{\"case\":\"%s\",\"B\":%d,\"H\":%d,\"KVH\":%d,\"D\":%d,\"Dv\":%d,\"Lq\":%d,\"Lk\":%d,"
                 "\"causal\":%s,\"dtype\":\"%s\",\"threads\":%d,\"forward_seconds\":%s,\"backward_seconds\":%s,"
                 "\"backward_gflops\":%s,\"peak_gflops\":%s,\"backward_ratio_to_peak\":%s,\"step_gflops\":%s,"
                 "\"peak_rss_mib\":%s,\"pytorch_step_seconds\":%s,\"pytorch_backward_seconds\":%s,"
                 "\"pytorch_peak_rss_mib\":%s,\"speedup_vs_pytorch\":%s}\n",
                 c.name.c_str(), c.batch, d.num_heads, d.effective_kv_heads(), d.qk_head_dim, d.effective_v_head_dim(),
                 c.query_length, c.key_length, c.causal() ? "true" : "false",
                 std::string(name_of(d.element_type)).c_str(), o.threads, json_number(forward).c_str(),
                 json_number(backward).c_str(), json_number(backward_gflops).c_str(), json_number(peak).c_str(),
                 json_number(backward_gflops / peak).c_str(), json_number(step_gflops).c_str(),
                 json_number(ours.peak_rss_mb).c_str(), json_number(pytorch_both).c_str(),
                 json_number(pytorch_backward).c_str(), json_number(pytorch_rss).c_str(), json_number(speedup).c_str());
  }
  return true;
}

// A module case (module_cases.hpp): its row (the whole forward's GFLOP/s against the peak and the
// peers'), its JSON line, and its targets' line (the projections' share of the time and their GFLOP/s)
// appended to `targets`.
bool run_module_case(const module_bench_case& c, const options& o, double peak, bool have_onednn, FILE* json,
                     std::string& targets) {
  const child_report ours = in_child([&] {
    const module_timing t = time_module(c, o.threads);
    return std::pair{t.seconds, t.projection_share};
  });
  if (!ours.ok || ours.value <= 0) {
    std::printf("%-20s failed\n", c.name.c_str());
    return false;
  }
  const double seconds = ours.value, share = ours.second, gflops = c.flops() / seconds / 1e9;
  const double projection_gflops = c.projection_flops() / (share * seconds) / 1e9;
  double onednn = NAN, pytorch = NAN;
  if (have_onednn) {
    const child_report peer = in_child([&] {
      keep_freed_memory_mapped();
      return std::pair{time_onednn_module(c), 0.0};
    });
    if (peer.ok) onednn = peer.value;
  }
  if (o.peers)
    if (const auto line = first_line_of(peer_command("peer_pytorch_module.py") + " " + std::to_string(o.threads) +
                                        " " + pytorch_module_arguments(c) + " 2>/dev/null"))
      pytorch = std::strtod(line->c_str(), nullptr);
  auto peer_text = [&](double peer_seconds) {
    char text[32];
    if (std::isnan(peer_seconds)) std::snprintf(text, sizeof text, "%9s %7s", o.peers ? "missing" : "skipped", "");
    else std::snprintf(text, sizeof text, "%9.1f %6.2fx", c.flops() / peer_seconds / 1e9, peer_seconds / seconds);
    return std::string(text);
  };
  std::printf("%-20s %9.3f %7.1f %7.0f%% %7s %9.0f | %s | %s\n", c.name.c_str(), seconds * 1e3, gflops,
              100 * gflops / peak, "", ours.peak_rss_mb, peer_text(onednn).c_str(), peer_text(pytorch).c_str());
  std::fflush(stdout);
  char line[400];
  std::snprintf(line, sizeof line,
                "%s: %s PyTorch (target >= 1.5x), %s oneDNN (target >= 1.2x); projections %.0f%% of the time at "
                "%.1f GFLOP/s = %.2f of peak (target >= 0.75)\n",
                c.name.c_str(), speedup_text(pytorch / seconds, o.peers).c_str(),
                speedup_text(onednn / seconds, o.peers).c_str(), 100 * share,
                projection_gflops, projection_gflops / peak);
  targets += line;
  if (json) {
    const mha_desc& d = c.desc;
    std::fprintf(json,
                 "{\"case\":\"%s\",\"B\":%d,\"L\":%d,\"S\":%d,\"E\":%d,\"H\":%d,\"KVH\":%d,\"dtype\":\"%s\","
                 "\"threads\":%d,\"seconds_median\":%s,\"gflops\":%s,\"peak_gflops\":%s,\"ratio_to_peak\":%s,"
                 "\"projection_share\":%s,\"projection_gflops\":%s,\"projection_ratio_to_peak\":%s,"
                 "\"peak_rss_mib\":%s,\"peer_onednn_seconds\":%s,\"speedup_vs_onednn\":%s,"
                 "\"peer_pytorch_seconds\":%s,\"speedup_vs_pytorch\":%s}\n",
                 c.name.c_str(), c.batch, c.queries, c.keys, d.embed, d.num_heads, d.effective_kv_heads(),
                 std::string(name_of(d.element_type)).c_str(), o.threads, json_number(seconds).c_str(),
                 json_number(gflops).c_str(), json_number(peak).c_str(), json_number(gflops / peak).c_str(),
                 json_number(share).c_str(), json_number(projection_gflops).c_str(),
                 json_number(projection_gflops / peak).c_str(), json_number(ours.peak_rss_mb).c_str(),
                 json_number(onednn).c_str(), json_number(onednn / seconds).c_str(), json_number(pytorch).c_str(),
                 json_number(pytorch / seconds).c_str());
  }
  return true;
}

// The CPU table: attngen's kernels against the machine's limits and the CPU peers, in the same run.
int run_on_cpu(const options& o, const std::vector<const bench_case*>& selected,
               const std::vector<const module_bench_case*>& selected_modules, FILE* json) {

  const child_report limits_report = in_child([&] {
    const machine_limits m = measure_machine_limits(o.threads);
    return std::pair{m.peak_gflops, m.triad_gbps};
  });
  const double peak = limits_report.value, triad = limits_report.second;
  std::printf("machine: %d threads, fp32 FMA peak %.0f GFLOP/s, triad %.1f GB/s (measured now)\n", o.threads, peak,
              triad);
  const bool have_onednn = o.peers && onednn_available();
  if (o.peers && !have_onednn) std::printf("peer onednn: missing (built without libdnnl-dev)\n");

  std::printf("%-20s %9s %7s %8s %7s %9s | %9s %7s | %9s %7s\n", "case", "ms", "GFLOP/s", "of peak", "GB/s",
              "RSS MiB", "oneDNN", "speedup", "PyTorch", "speedup");
  bool all_ok = true;
  // Masked cases are judged by their time against long_causal's (same shape, every key block).
  double long_causal_seconds = NAN;
  std::string sparsity_report, cache_targets;
  std::map<std::string, double> f32_tokens;
  for (const bench_case* c : selected) {
    if (c->gpu_only()) {
      std::printf("%-20s GPU only: f32 on the tensor cores (its CPU code is the f32 case's)\n", c->name.c_str());
      continue;
    }
    if (c->trains()) {
      all_ok = run_training_case(*c, o, peak, json, cache_targets) && all_ok;
      continue;
    }
    if (c->has_sequence_lengths()) {
      all_ok = run_cache_case(*c, o, {.peak_gflops = peak, .triad_gbps = triad}, json, f32_tokens, cache_targets) &&
               all_ok;
      continue;
    }
    const child_report ours = in_child([&] { return time_attngen(*c, o.threads); });
    if (!ours.ok || ours.value <= 0) {
      std::printf("%-20s failed\n", c->name.c_str());
      all_ok = false;
      continue;
    }
    const double seconds = ours.value, gflops = c->flops() / seconds / 1e9, gbps = c->bytes() / seconds / 1e9;
    double onednn = NAN, pytorch = NAN;
    std::string missing;
    const bool peers = o.peers && c->peers_compute_it;
    if (have_onednn && c->peers_compute_it) {
      const child_report peer = in_child([&] {
        keep_freed_memory_mapped();
        return std::pair{time_onednn(*c), 0.0};
      });
      if (peer.ok) onednn = c->flops() / peer.value / 1e9;
    } else if (peers) {
      missing += "\"onednn\"";
    }
    if (peers) {
      if (const auto peer = time_pytorch(*c, o.threads)) pytorch = c->flops() / *peer / 1e9;
      else missing += std::string(missing.empty() ? "" : ",") + "\"pytorch\"";
    }
    if (c->name == "long_causal") long_causal_seconds = seconds;
    const double time_ratio = c->peers_compute_it ? NAN : seconds / long_causal_seconds;
    if (!c->peers_compute_it) {
      // The share of long_causal's key blocks the mask leaves: window / (L / 2), or 1 / documents.
      const double visible = c->documents > 0 ? 1.0 / c->documents : 1024.0 / (c->key_length / 2.0);
      char line[160];
      std::snprintf(line, sizeof line, "%s / long_causal time: %.3f (target <= 1.5 x %.4f = %.4f)\n",
                    c->name.c_str(), time_ratio, visible, 1.5 * visible);
      sparsity_report += line;
    }
    auto peer_text = [&](double peer_gflops, double ours_gflops) {
      char text[32];
      const char* why = !o.peers ? "skipped" : c->peers_compute_it ? "missing" : "n/a";
      if (std::isnan(peer_gflops)) std::snprintf(text, sizeof text, "%9s %7s", why, "");
      else std::snprintf(text, sizeof text, "%9.1f %6.2fx", peer_gflops, ours_gflops / peer_gflops);
      return std::string(text);
    };
    std::printf("%-20s %9.3f %7.1f %7.0f%% %7.1f %9.0f | %s | %s\n", c->name.c_str(), seconds * 1e3, gflops,
                100 * gflops / peak, gbps, ours.peak_rss_mb, peer_text(onednn, gflops).c_str(),
                peer_text(pytorch, gflops).c_str());
    std::fflush(stdout);
    if (json) {
      const auto& d = c->desc;
      std::fprintf(json,
                   "{\"case\":\"%s\",\"B\":%d,\"H\":%d,\"KVH\":%d,\"D\":%d,\"Dv\":%d,\"Lq\":%d,\"Lk\":%d,"
                   "\"causal\":%s,\"dtype\":\"%s\",\"threads\":%d,\"seconds_median\":%s,\"gflops\":%s,"
                   "\"peak_gflops\":%s,\"ratio_to_peak\":%s,\"gbps\":%s,\"triad_gbps\":%s,"
                   "\"ratio_to_triad\":%s,\"peak_rss_mib\":%s,\"tensors_mib\":%s,"
                   "\"peer_onednn_gflops\":%s,\"speedup_vs_onednn\":%s,"
                   "\"peer_pytorch_gflops\":%s,\"speedup_vs_pytorch\":%s,\"missing_peers\":[%s],"
                   "\"time_ratio_to_long_causal\":%s}\n",
                   c->name.c_str(), c->batch, d.num_heads, d.effective_kv_heads(), d.qk_head_dim,
                   d.effective_v_head_dim(), c->query_length, c->key_length, c->causal() ? "true" : "false",
                   std::string(name_of(d.element_type)).c_str(), o.threads, json_number(seconds).c_str(),
                   json_number(gflops).c_str(), json_number(peak).c_str(), json_number(gflops / peak).c_str(),
                   json_number(gbps).c_str(), json_number(triad).c_str(), json_number(gbps / triad).c_str(),
                   json_number(ours.peak_rss_mb).c_str(), json_number(ours.second).c_str(),
                   json_number(onednn).c_str(), json_number(gflops / onednn).c_str(), json_number(pytorch).c_str(),
                   json_number(gflops / pytorch).c_str(), missing.c_str(), json_number(time_ratio).c_str());
    }
  }
  std::string module_targets;
  for (const module_bench_case* c : selected_modules)
    all_ok = run_module_case(*c, o, peak, have_onednn, json, module_targets) && all_ok;
  std::printf("%s%s%s", sparsity_report.c_str(), cache_targets.c_str(), module_targets.c_str());
  return all_ok ? 0 : 1;
}

}  // namespace

int run(int argc, char** argv) {
  const options o = parse(argc, argv);
  for (const std::string& name : o.cases)
    if (std::none_of(all_cases().begin(), all_cases().end(), [&](const bench_case& c) { return c.name == name; }) &&
        std::none_of(module_cases().begin(), module_cases().end(),
                     [&](const module_bench_case& c) { return c.name == name; })) {
      std::fprintf(stderr, "attngen-bench: unknown case name %s (see --help)\n", name.c_str());
      return 2;
    }
  std::vector<const bench_case*> selected;
  for (const auto& c : all_cases())
    if (o.cases.empty() || std::find(o.cases.begin(), o.cases.end(), c.name) != o.cases.end())
      selected.push_back(&c);
  std::vector<const module_bench_case*> selected_modules;
  for (const auto& c : module_cases())
    if (o.cases.empty() || std::find(o.cases.begin(), o.cases.end(), c.name) != o.cases.end())
      selected_modules.push_back(&c);
  FILE* json = o.json_path.empty() ? nullptr : std::fopen(o.json_path.c_str(), "w");
  if (!o.json_path.empty() && json == nullptr) {
    std::fprintf(stderr, "attngen-bench: cannot write %s\n", o.json_path.c_str());
    return 1;
  }
  const int result =
      o.device == device_kind::host ? run_on_cpu(o, selected, selected_modules, json) : run_on_gpu(o, selected, json);
  if (json) std::fclose(json);
  return result;
}

}  // namespace attngen::bench

int main(int argc, char** argv) { return attngen::bench::run(argc, argv); }
