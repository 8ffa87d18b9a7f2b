#include "module/pytorch_reference.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include "attngen/module_text_format.hpp"

#ifndef ATTNGEN_PYTORCH_REFERENCE_SCRIPT
#error "ATTNGEN_PYTORCH_REFERENCE_SCRIPT must name pytorch_reference.py"
#endif

namespace attngen::testing {

namespace {

namespace fs = std::filesystem;

void write_case(const module_problem& p, const fs::path& directory) {
  fs::create_directories(directory);
  const mha_desc& d = p.desc;
  std::ofstream config(directory / "config.txt");
  config << "embed " << d.embed << "\nheads " << d.num_heads << "\nkv_heads " << d.effective_kv_heads()
         << "\nkdim " << d.effective_kdim() << "\nvdim " << d.effective_vdim() << "\nbias " << d.projection_bias
         << "\nself_attention " << d.self_attn << "\nbias_kv " << d.bias_kv << "\nzero_attn " << d.zero_attn << "\nbatch_first " << d.batch_major
         << "\ncausal " << name_of(d.causal_mode) << "\nkey_padding " << name_of(d.key_padding) << "\nattn_mask "
         << name_of(d.mask) << "\nattn_mask_shape " << name_of(d.mask_dims) << "\nweights " << name_of(d.weights)
         << "\nB " << p.batch << "\nL " << p.query_length << "\nS " << p.key_length << "\n";
  for (const auto& [name, tensor] : p.inputs) {
    config << "tensor " << name;
    for (int e : tensor.shape) config << " " << e;
    config << "\n";
    std::vector<double> values(tensor.values.begin(), tensor.values.end());
    std::ofstream data(directory / (name + ".bin"), std::ios::binary);
    data.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(double)));
  }
  if (!config) throw std::runtime_error("cannot write " + (directory / "config.txt").string());
}

std::vector<double> read_doubles(const fs::path& file, std::size_t count, const std::string& problem) {
  std::vector<double> values(count);
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), std::streamsize(count * sizeof(double)));
  if (!in || in.gcount() != std::streamsize(count * sizeof(double)))
    throw std::runtime_error("PyTorch wrote no " + file.filename().string() + " for " + problem);
  return values;
}

}  // namespace

std::vector<module_reference> pytorch_references(const std::vector<module_problem>& problems) {
  const fs::path root = fs::temp_directory_path() / ("attngen_pytorch_" + std::to_string(::getpid()));
  fs::remove_all(root);
  // A test binary carried to another machine (a GPU one) is told where the script and a Python with
  // torch are there.
  const char* python = std::getenv("ATTNGEN_PYTHON");
  const char* source = std::getenv("ATTNGEN_SOURCE_DIR");
  std::string command = std::string(python ? python : "/usr/bin/python3") + " " +
                        (source ? std::string(source) + "/tests/module/pytorch_reference.py"
                                : std::string(ATTNGEN_PYTORCH_REFERENCE_SCRIPT));
  for (std::size_t n = 0; n < problems.size(); ++n) {
    const fs::path directory = root / std::to_string(n);
    write_case(problems[n], directory);
    command += " " + directory.string();
  }
  if (std::system(command.c_str()) != 0) {
    fs::remove_all(root);
    throw std::runtime_error("PyTorch reference failed (is python3-torch installed? scripts/setup installs it): " +
                             command);
  }
  std::vector<module_reference> references;
  for (std::size_t n = 0; n < problems.size(); ++n) {
    const fs::path directory = root / std::to_string(n);
    module_reference r;
    r.output = read_doubles(directory / "output.bin", element_count(problems[n].output_shape()), problems[n].name());
    if (problems[n].desc.weights != weights_output::none)
      r.weights = read_doubles(directory / "weights.bin", element_count(problems[n].weights_shape()), problems[n].name());
    references.push_back(std::move(r));
  }
  fs::remove_all(root);
  return references;
}

}  // namespace attngen::testing
