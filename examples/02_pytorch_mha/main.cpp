// Runs a PyTorch nn.MultiheadAttention, exported by export_from_pytorch.py, through the generated
// module kernel: loads the state_dict as it is, runs the same batch, compares the output and the
// attention weights with PyTorch's, and prints the speed.
// Usage: pytorch_mha EXPORT_DIR
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "encoder_attention.hpp"

namespace {

using kernel = example::encoder_attention;

struct loaded_tensor {
  std::vector<std::int64_t> shape;
  std::vector<char> bytes;
};

// Every tensor listed in DIR/manifest.txt ("name extent..." per line), read from DIR/name.bin.
std::map<std::string, loaded_tensor> load_export(const std::string& directory) {
  std::map<std::string, loaded_tensor> tensors;
  std::ifstream manifest(directory + "/manifest.txt");
  for (std::string line; std::getline(manifest, line);) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    loaded_tensor t;
    for (std::int64_t extent; words >> extent;) t.shape.push_back(extent);
    std::ifstream data(directory + "/" + name + ".bin", std::ios::binary);
    t.bytes.assign(std::istreambuf_iterator<char>(data), std::istreambuf_iterator<char>());
    tensors[name] = std::move(t);
  }
  return tensors;
}

double largest_difference(const std::vector<float>& ours, const loaded_tensor& theirs) {
  const auto* reference = reinterpret_cast<const float*>(theirs.bytes.data());
  double worst = 0;
  for (std::size_t n = 0; n < ours.size(); ++n) worst = std::max(worst, std::fabs(double(ours[n]) - reference[n]));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s EXPORT_DIR (written by export_from_pytorch.py)\n", argv[0]);
    return 2;
  }
  const auto tensors = load_export(argv[1]);
  if (!tensors.count("input") || !tensors.count("pytorch_output")) {
    std::fprintf(stderr, "%s: no export found; run export_from_pytorch.py %s first\n", argv[1], argv[1]);
    return 2;
  }

  // The state_dict, as PyTorch named it; everything else in the export is data.
  std::vector<attngen::state_dict_tensor> state_dict;
  for (const auto& [name, t] : tensors)
    if (name != "input" && name != "key_padding_mask" && name.rfind("pytorch_", 0) != 0)
      state_dict.push_back({name, t.bytes.data()});
  attngen::mha_args args;
  if (attngen::status s = attngen::weights_from_state_dict(kernel::description, state_dict, args.weights); !s) {
    std::fprintf(stderr, "loading the state_dict: %s\n", s.message().c_str());
    return 1;
  }

  const loaded_tensor& input = tensors.at("input");
  const std::int64_t B = input.shape[0], L = input.shape[1], E = input.shape[2];
  const auto* x = reinterpret_cast<const float*>(input.bytes.data());
  args.query = args.key = args.value = attngen::make_tensor(x, {B, L, E});  // self-attention
  args.key_padding_mask =
      attngen::make_tensor(reinterpret_cast<const std::uint8_t*>(tensors.at("key_padding_mask").bytes.data()), {B, L});
  std::vector<float> output(std::size_t(B * L * E)), weights(std::size_t(B * L * L));
  args.output = attngen::make_tensor(output.data(), {B, L, E});
  args.attn_weights = attngen::make_tensor(weights.data(), {B, L, L});
  if (attngen::status s = kernel::run(args); !s) {
    std::fprintf(stderr, "kernel: %s\n", s.message().c_str());
    return 1;
  }

  // Both sides compute in float32; the limit allows their different summation orders.
  constexpr double limit = 1e-4;
  const double output_difference = largest_difference(output, tensors.at("pytorch_output"));
  const double weights_difference = largest_difference(weights, tensors.at("pytorch_weights"));
  std::printf("nn.MultiheadAttention(%lld, %d, batch_first=True), batch %lld, length %lld, key_padding_mask\n",
              static_cast<long long>(E), kernel::description.num_heads, static_cast<long long>(B),
              static_cast<long long>(L));
  std::printf("largest difference from PyTorch: output %.2e, attention weights %.2e (limit %.0e)\n",
              output_difference, weights_difference, limit);

  constexpr int calls = 50;
  std::vector<double> seconds;
  for (int n = 0; n < calls; ++n) {
    const auto start = std::chrono::steady_clock::now();
    if (!kernel::run(args)) return 1;
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + calls / 2, seconds.end());
  std::printf("median time per call: %.3f ms\n", seconds[calls / 2] * 1e3);
  const bool ok = output_difference <= limit && weights_difference <= limit;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
