#include "train_cases.hpp"

#include <cstdio>
#include <random>
#include <vector>

#include "random_data.hpp"
#include "timing.hpp"

namespace attngen::bench {

training_times time_training(const bench_case& c, int threads) {
  set_num_threads(threads);
  const attention_desc& d = c.desc;
  const std::int64_t B = c.batch, Lq = c.query_length, Lk = c.key_length, H = d.num_heads,
                     KVH = d.effective_kv_heads(), D = d.qk_head_dim, Dv = d.effective_v_head_dim();
  const dtype t = d.element_type;
  std::mt19937 rng(1);
  auto tensor = [&](std::int64_t elements) {
    std::vector<std::uint8_t> bytes(std::size_t(elements) * size_of(t));
    fill_uniform(bytes.data(), std::size_t(elements), t, rng);
    return bytes;
  };
  auto q = tensor(B * Lq * H * D), k = tensor(B * Lk * KVH * D), v = tensor(B * Lk * KVH * Dv);
  auto d_output = tensor(B * Lq * H * Dv);
  std::vector<std::uint8_t> output(q.size() / std::size_t(D) * std::size_t(Dv)), dq(q.size()), dk(k.size()),
      dv(v.size());
  std::vector<float> lse(std::size_t(B * H * Lq));

  attention_args forward;
  forward.q = make_tensor(q.data(), t, {B, Lq, H, D});
  forward.k = make_tensor(k.data(), t, {B, Lk, KVH, D});
  forward.v = make_tensor(v.data(), t, {B, Lk, KVH, Dv});
  forward.output = make_tensor(output.data(), t, {B, Lq, H, Dv});
  forward.lse = make_tensor(lse.data(), {B, H, Lq});
  // The backward reads the forward's tensors as it took and wrote them.
  attention_backward_args backward;
  backward.q = forward.q;
  backward.k = forward.k;
  backward.v = forward.v;
  backward.output = forward.output;
  backward.lse = forward.lse;
  backward.d_output = make_tensor(d_output.data(), t, {B, Lq, H, Dv});
  backward.dq = make_tensor(dq.data(), t, {B, Lq, H, D});
  backward.dk = make_tensor(dk.data(), t, {B, Lk, KVH, D});
  backward.dv = make_tensor(dv.data(), t, {B, Lk, KVH, Dv});

  bool failed = false;
  auto check = [&](status s) {
    if (!s) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), s.message().c_str());
      failed = true;
    }
  };
  training_times times;
  times.forward_seconds = median_seconds([&](int) { check(c.run(forward)); });
  times.backward_seconds = median_seconds([&](int) { check(c.run_backward(backward)); });
  if (failed) times.forward_seconds = times.backward_seconds = -1;
  return times;
}

}  // namespace attngen::bench
