#include "device_timing.hpp"

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "attngen/runtime/device_tensor.hpp"
#include "random_data.hpp"
#include "timing.hpp"

namespace attngen::bench {

std::optional<double> time_attngen_on_device(const bench_case& c, device_kind device) {
  const auto& d = c.desc;
  const std::int64_t B = c.batch, Lq = c.query_length, Lk = c.key_length, H = d.num_heads,
                     KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  const dtype t = d.element_type;
  std::mt19937 rng(1);
  // Host data, laid out (B, heads, L, D) and seen through (B, L, heads, D) views, copied to the device.
  std::vector<std::vector<std::uint8_t>> host;
  std::vector<std::unique_ptr<device_tensor>> on_device;
  auto device_copy = [&](std::int64_t length, std::int64_t heads, std::int64_t dim) -> std::optional<tensor_view> {
    const std::size_t elements = std::size_t(B * length * heads * dim);
    host.emplace_back(elements * size_of(t));
    fill_uniform(host.back().data(), elements, t, rng);
    const tensor_view view =
        make_tensor(host.back().data(), t, {B, length, heads, dim}, {heads * length * dim, dim, length * dim, 1});
    on_device.push_back(std::make_unique<device_tensor>(view, device));
    if (!on_device.back()->result()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), on_device.back()->result().message().c_str());
      return std::nullopt;
    }
    return on_device.back()->view();
  };
  attention_args args;
  const auto q = device_copy(Lq, H, D), output = device_copy(Lq, H, Dv);
  if (!q || !output) return std::nullopt;
  args.q = *q;
  args.output = *output;
  std::vector<tensor_view> k, v;
  for (int n = 0; n < c.rotated_caches; ++n) {
    const auto key = device_copy(Lk, KVH, D), value = device_copy(Lk, KVH, Dv);
    if (!key || !value) return std::nullopt;
    k.push_back(*key);
    v.push_back(*value);
  }
  std::vector<std::int32_t> documents;
  if (c.documents > 0) {
    documents = c.document_ids();
    on_device.push_back(
        std::make_unique<device_tensor>(make_tensor(documents.data(), dtype::i32, {B, Lk}), device));
    if (!on_device.back()->result()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), on_device.back()->result().message().c_str());
      return std::nullopt;
    }
    args.captures[0] = on_device.back()->view();
  }
  device_tensor& output_memory = *on_device[1];
  bool failed = false;
  const double seconds = median_seconds([&](int call) {
    args.k = k[call % c.rotated_caches];
    args.v = v[call % c.rotated_caches];
    status s = c.run(args);
    if (s) s = output_memory.synchronize();
    if (!s && !failed) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), s.message().c_str());
      failed = true;
    }
  });
  if (failed) return std::nullopt;
  return seconds;
}

}  // namespace attngen::bench
