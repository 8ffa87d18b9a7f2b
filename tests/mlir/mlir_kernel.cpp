#include "mlir/mlir_kernel.hpp"

#include <dlfcn.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attngen/mlir/emit_mlir.hpp"
#include "support/element_codec.hpp"

namespace attngen::testing {

namespace {

// Runs a shell command; returns its exit status and puts its output (stdout and stderr) in `output`.
int run_command(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  char buffer[4096];
  output.clear();
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string temporary_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "attngen-mlir-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
  return pattern;
}

// Tensor arguments in the exported function's order: q, k, v, mask, key_padding, captures.
int tensor_argument_count(const attention_desc& d) {
  return 3 + d.has_additive_mask() + d.has_key_padding_mask() + d.captures.tensor_count;
}

// Calls _mlir_ciface_attention with each tensor's memref descriptor (a pointer) and each scalar
// (by value): what C++ cannot spell for every argument list.
std::string c_shim(const attention_desc& d) {
  std::ostringstream c;
  const int tensors = tensor_argument_count(d);
  c << "void _mlir_ciface_attention(void*";
  for (int t = 0; t < tensors; ++t) c << ", void*";
  for (int s = 0; s < d.captures.scalar_count; ++s) c << ", float";
  c << ");\nvoid attngen_call(void* results, void* const* tensors, const float* scalars) {\n"
    << "  (void)scalars;\n  _mlir_ciface_attention(results";
  for (int t = 0; t < tensors; ++t) c << ", tensors[" << t << "]";
  for (int s = 0; s < d.captures.scalar_count; ++s) c << ", scalars[" << s << "]";
  c << ");\n}\n";
  return c.str();
}

// A memref descriptor: allocated and aligned pointers, offset, sizes, strides (dense).
std::vector<std::int64_t> descriptor(const void* data, const std::vector<int>& shape) {
  std::vector<std::int64_t> words = {std::int64_t(reinterpret_cast<std::uintptr_t>(data)),
                                     std::int64_t(reinterpret_cast<std::uintptr_t>(data)), 0};
  for (int extent : shape) words.push_back(extent);
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(shape.size());
  for (int x = int(shape.size()) - 1; x >= 0; --x) {
    strides[std::size_t(x)] = stride;
    stride *= shape[std::size_t(x)];
  }
  words.insert(words.end(), strides.begin(), strides.end());
  return words;
}

// Copies a result memref (rank `rank` descriptor at `words`) out as floats and frees its buffer.
std::vector<float> take_result(const std::int64_t* words, int rank, dtype type) {
  const auto* aligned = reinterpret_cast<const std::uint8_t*>(words[1]);
  std::int64_t count = 1;
  for (int x = 0; x < rank; ++x) count *= words[3 + x];
  std::vector<float> values = decode(type, aligned + words[2] * size_of(type), std::size_t(count));
  std::free(reinterpret_cast<void*>(words[0]));
  return values;
}

}  // namespace

std::string verify_mlir(const std::string& module_text) {
  const std::string directory = temporary_directory();
  write_file(directory + "/module.mlir", module_text);
  std::string output;
  const int status = run_command(std::string(ATTNGEN_MLIR_OPT) + " " + directory + "/module.mlir -o /dev/null", output);
  std::filesystem::remove_all(directory);
  return status == 0 ? std::string() : output.empty() ? std::string("mlir-opt failed") : output;
}

mlir_kernel::mlir_kernel(const attention_desc& desc, const mlir_export::mlir_options& options)
    : desc_(desc), directory_(temporary_directory()) {
  const std::string base = directory_ + "/attention";
  write_file(base + ".mlir", mlir_export::emit_mlir(desc, "attention", options));
  write_file(directory_ + "/shim.c", c_shim(desc));
  const std::string steps[] = {
      std::string(ATTNGEN_MLIR_OPT) + " " + base + ".mlir " + std::string(mlir_export::mlir_lowering_pipeline()) +
          " -o " + base + ".llvm.mlir",
      std::string(ATTNGEN_MLIR_TRANSLATE) + " --mlir-to-llvmir " + base + ".llvm.mlir -o " + base + ".ll",
      std::string(ATTNGEN_LLC) + " -O2 -mattr=+f16c -filetype=obj -relocation-model=pic " + base + ".ll -o " + base + ".o",
      std::string(ATTNGEN_C_COMPILER) + " -shared -fPIC " + directory_ + "/shim.c " + base + ".o -lm -o " + base + ".so"};
  for (const std::string& step : steps) {
    std::string output;
    if (run_command(step, output) != 0) throw std::runtime_error("`" + step + "` failed:\n" + output);
  }
  library_ = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  call_ = reinterpret_cast<decltype(call_)>(dlsym(library_, "attngen_call"));
  if (call_ == nullptr) throw std::runtime_error("attngen_call not found in the compiled module");
}

mlir_kernel::~mlir_kernel() {
  if (library_ != nullptr) dlclose(library_);
  std::filesystem::remove_all(directory_);
}

mlir_result mlir_kernel::run(const attention_problem& p) const {
  const attention_desc& d = desc_;
  const int B = p.batch, Lq = p.query_length, Lk = p.key_length, H = d.num_heads, KVH = d.effective_kv_heads();
  const dtype type = d.element_type;
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<std::vector<std::int64_t>> descriptors;
  const auto add = [&](std::vector<std::uint8_t> data, const std::vector<int>& shape) {
    bytes.push_back(std::move(data));
    descriptors.push_back(descriptor(bytes.back().data(), shape));
  };
  add(encode(type, p.q), {B, Lq, H, d.qk_head_dim});
  add(encode(type, p.k), {B, Lk, KVH, d.qk_head_dim});
  add(encode(type, p.v), {B, Lk, KVH, d.effective_v_head_dim()});
  if (d.has_additive_mask()) add(encode(type, p.mask), p.mask_shape());
  if (d.has_key_padding_mask()) add(p.key_padding, {B, Lk});
  for (int t = 0; t < d.captures.tensor_count; ++t) {
    if (d.captures.tensors[t].type == capture_type::f32) {
      add(encode(dtype::f32, p.captures[std::size_t(t)]), p.capture_shape(t));
    } else {
      std::vector<std::uint8_t> data(p.captures[std::size_t(t)].size() * 4);
      for (std::size_t n = 0; n < p.captures[std::size_t(t)].size(); ++n) {
        const std::int32_t value = std::int32_t(p.captures[std::size_t(t)][n]);
        std::memcpy(&data[4 * n], &value, 4);
      }
      add(std::move(data), p.capture_shape(t));
    }
  }
  std::vector<void*> tensors;
  for (auto& words : descriptors) tensors.push_back(words.data());
  // The results: the output's rank-4 descriptor, then the lse's rank-3 one (11 and 9 words).
  std::int64_t results[11 + 9] = {};
  call_(results, tensors.data(), p.scalars.data());
  mlir_result r;
  r.output = take_result(results, 4, type);
  if (d.lse_output) r.lse = take_result(results + 11, 3, dtype::f32);
  return r;
}

}  // namespace attngen::testing
