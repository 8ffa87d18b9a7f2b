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
  const bool backward = p.inputs.count("d_output") != 0;
  host_tensor dropout_keep;
  if (backward) {
    config << "backward 1\n";
    if (d.has_dropout() && p.training) {
      // Each weight's factor as the kernel draws it, in PyTorch's key order (appended keys last).
      const int keys = p.key_length + d.extra_keys();
      const float kept = 1.0f / (1.0f - d.dropout_p);
      dropout_keep.shape = {p.batch * d.num_heads, p.query_length, keys};
      for (int b = 0; b < p.batch; ++b)
        for (int h = 0; h < d.num_heads; ++h)
          for (int i = 0; i < p.query_length; ++i)
            for (int column = 0; column < keys; ++column)
              dropout_keep.values.push_back(dropout_bits(p.seed, b, h, i, column, d.num_heads) >=
                                                    dropout_threshold(d.dropout_p)
                                                ? kept
                                                : 0.0f);
      config << "dropout " << d.dropout_p << "\n";
    }
  }
  std::map<std::string, host_tensor> tensors = p.inputs;
  if (!dropout_keep.values.empty()) tensors["dropout_keep"] = dropout_keep;
  for (const auto& [name, tensor] : tensors) {
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

// Writes each problem's case under a fresh directory and runs the script over them all; `read` then
// reads problem n's results from its directory.
template <typename Result, typename Read>
std::vector<Result> run_pytorch(const std::vector<module_problem>& problems, Read read) {
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
  std::vector<Result> results;
  for (std::size_t n = 0; n < problems.size(); ++n) results.push_back(read(problems[n], root / std::to_string(n)));
  fs::remove_all(root);
  return results;
}

}  // namespace

std::vector<module_reference> pytorch_references(const std::vector<module_problem>& problems) {
  return run_pytorch<module_reference>(problems, [](const module_problem& p, const fs::path& directory) {
    module_reference r;
    r.output = read_doubles(directory / "output.bin", element_count(p.output_shape()), p.name());
    if (p.desc.weights != weights_output::none)
      r.weights = read_doubles(directory / "weights.bin", element_count(p.weights_shape()), p.name());
    return r;
  });
}

std::vector<module_gradients> pytorch_gradients(const std::vector<module_problem>& problems) {
  return run_pytorch<module_gradients>(problems, [](const module_problem& p, const fs::path& directory) {
    module_gradients gradients;
    for (const auto& [name, tensor] : p.inputs)
      if (name != "d_output" && name != "key_padding" && name != "attn_mask")
        gradients["d_" + name] = read_doubles(directory / ("d_" + name + ".bin"), tensor.values.size(), p.name());
    return gradients;
  });
}

}  // namespace attngen::testing
