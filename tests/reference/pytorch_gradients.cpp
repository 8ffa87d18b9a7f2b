#include "reference/pytorch_gradients.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "attngen/text_format.hpp"

#ifndef ATTNGEN_PYTORCH_GRADIENTS_SCRIPT
#error "ATTNGEN_PYTORCH_GRADIENTS_SCRIPT must name pytorch_gradients.py"
#endif

namespace attngen::testing {

namespace {

namespace fs = std::filesystem;

template <typename T>
void write_doubles(const fs::path& file, const std::vector<T>& values) {
  const std::vector<double> as_double(values.begin(), values.end());
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(as_double.data()), std::streamsize(as_double.size() * sizeof(double)));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::vector<double> read_doubles(const fs::path& file, std::size_t count) {
  std::vector<double> values(count);
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), std::streamsize(count * sizeof(double)));
  if (!in || in.gcount() != std::streamsize(count * sizeof(double)))
    throw std::runtime_error("PyTorch wrote no " + file.string());
  return values;
}

void write_case(const attention_problem& p, const std::vector<float>& d_output, const fs::path& directory) {
  fs::create_directories(directory);
  std::ofstream(directory / "description.txt") << to_text(p.desc);
  std::ofstream(directory / "sizes.txt") << p.batch << " " << p.query_length << " " << p.key_length << "\n";
  write_doubles(directory / "q.bin", p.q);
  write_doubles(directory / "k.bin", p.k);
  write_doubles(directory / "v.bin", p.v);
  write_doubles(directory / "d_output.bin", d_output);
  if (!p.mask.empty()) write_doubles(directory / "mask.bin", p.mask);
  if (!p.key_padding.empty()) write_doubles(directory / "key_padding.bin", p.key_padding);
  if (!p.sinks.empty()) write_doubles(directory / "sinks.bin", p.sinks);
  for (std::size_t n = 0; n < p.captures.size(); ++n)
    write_doubles(directory / ("capture_" + std::to_string(n) + ".bin"), p.captures[n]);
  if (!p.scalars.empty()) write_doubles(directory / "scalars.bin", p.scalars);
}

}  // namespace

std::vector<reference_gradients> pytorch_gradients(const std::vector<attention_problem>& problems,
                                                   const std::vector<std::vector<float>>& d_outputs) {
  const fs::path root = fs::temp_directory_path() / ("attngen_gradients_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const char* python = std::getenv("ATTNGEN_PYTHON");
  std::string command = std::string(python ? python : "/usr/bin/python3") + " " + ATTNGEN_PYTORCH_GRADIENTS_SCRIPT;
  for (std::size_t n = 0; n < problems.size(); ++n) {
    write_case(problems[n], d_outputs[n], root / std::to_string(n));
    command += " " + (root / std::to_string(n)).string();
  }
  if (std::system(command.c_str()) != 0) {
    fs::remove_all(root);
    throw std::runtime_error("PyTorch gradients failed (is python3-torch installed? scripts/setup installs it): " +
                             command);
  }
  std::vector<reference_gradients> gradients;
  for (std::size_t n = 0; n < problems.size(); ++n) {
    const attention_problem& p = problems[n];
    const attention_desc& d = p.desc;
    const fs::path directory = root / std::to_string(n);
    const std::size_t B = std::size_t(p.batch), Lq = std::size_t(p.query_length), Lk = std::size_t(p.key_length);
    const std::size_t H = std::size_t(d.num_heads), KVH = std::size_t(d.effective_kv_heads());
    const std::size_t D = std::size_t(d.qk_head_dim), Dv = std::size_t(d.effective_v_head_dim());
    reference_gradients g{read_doubles(directory / "dq.bin", B * Lq * H * D), read_doubles(directory / "dk.bin", B * Lk * KVH * D),
                          read_doubles(directory / "dv.bin", B * Lk * KVH * Dv), {}};
    if (d.has_sinks) g.d_sinks = read_doubles(directory / "d_sinks.bin", H);
    g.d_captures.resize(std::size_t(d.captures.tensor_count));
    for (int t = 0; t < d.captures.tensor_count; ++t)
      if (d.capture_has_gradient(t))
        g.d_captures[std::size_t(t)] =
            read_doubles(directory / ("d_capture_" + std::to_string(t) + ".bin"), p.captures[std::size_t(t)].size());
    if (d.captures.scalar_count > 0)
      g.d_scalars = read_doubles(directory / "d_scalars.bin", std::size_t(d.captures.scalar_count));
    gradients.push_back(std::move(g));
  }
  fs::remove_all(root);
  return gradients;
}

}  // namespace attngen::testing
