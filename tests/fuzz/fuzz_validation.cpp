// libFuzzer target: a generated kernel's argument validation over real buffers. The kernel takes every
// kind of tensor (aot_all_options: H4 KVH2 D64 Dv32, bottom-right causal, (B, 1, Lq, Lk) mask, key
// padding, LSE). The input picks batch and lengths, then mutates each tensor: absent, null, a pointer
// off its element alignment, rank, an extent, element type, strides (padded or broken), device, an
// output overlapping an input. Every buffer ends at an inaccessible page, so a kernel reading past
// what its view spans faults.
// Properties: a refused call names a tensor and changes no byte of any buffer; a misaligned pointer
// is refused; an accepted call leaves its inputs unchanged and matches the float64 reference within
// tolerance.
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "aot_all_options.hpp"
#include "reference/reference_attention.hpp"
#include "support/compare.hpp"
#include "support/problem.hpp"

using namespace attngen;
using namespace attngen::testing;

namespace {

[[noreturn]] void violated(const char* property, const std::string& detail) {
  std::fprintf(stderr, "fuzz_validation: %s: %s\n", property, detail.c_str());
  std::abort();
}

// The fuzz input as a stream of choices; zeros once it is used up.
class choices {
 public:
  choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }

 private:
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

// Memory whose last byte is followed by an inaccessible page.
class guarded_buffer {
 public:
  explicit guarded_buffer(std::size_t bytes) {
    const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
    mapped_ = (bytes + page - 1) / page * page + page;
    void* base = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) violated("harness", "mmap failed");
    base_ = static_cast<std::uint8_t*>(base);
    mprotect(base_ + mapped_ - page, page, PROT_NONE);
    data_ = base_ + mapped_ - page - bytes;
    bytes_ = bytes;
  }
  ~guarded_buffer() { munmap(base_, mapped_); }
  guarded_buffer(const guarded_buffer&) = delete;
  guarded_buffer& operator=(const guarded_buffer&) = delete;
  std::uint8_t* data() const { return data_; }
  std::vector<std::uint8_t> bytes() const { return {data_, data_ + bytes_}; }

 private:
  std::uint8_t *base_ = nullptr, *data_ = nullptr;
  std::size_t mapped_ = 0, bytes_ = 0;
};

constexpr const char* names[] = {"q", "k", "v", "mask", "key_padding", "output", "lse"};
constexpr int tensor_count = 7, first_output = 5;

tensor_view dense(dtype type, std::initializer_list<std::int64_t> shape) {
  return make_tensor(static_cast<void*>(nullptr), type, shape);
}

// Elements a view spans, or -1 when it is not something to allocate (odd rank, huge or negative
// sizes): the kernel must then refuse it. A dimension of extent 1 is never stepped along, so its
// stride does not matter.
std::int64_t span_of(const tensor_view& t) {
  if (t.rank < 0 || t.rank > tensor_view::max_rank) return -1;
  std::int64_t last = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0 || t.shape[d] > 64) return -1;
    if (t.shape[d] == 0) return 0;
    if (t.shape[d] == 1) continue;
    if (t.strides[d] < 0 || t.strides[d] > (1 << 16)) return -1;
    last += (t.shape[d] - 1) * t.strides[d];
  }
  return last + 1;
}

void mutate(tensor_view& t, choices& in) {
  static constexpr std::int64_t extents[] = {0, 1, 2, 5, 31, 65, -1, std::int64_t(1) << 31, (std::int64_t(1) << 31) - 1};
  const std::uint8_t what = in.next() % 16;
  switch (what) {
    case 8: t = tensor_view{}; break;
    case 9: t.rank = int(in.next() % 7) - 1; break;
    case 10:
      if (t.rank > 0) t.shape[in.next() % t.rank] = extents[in.next() % std::size(extents)];
      break;
    case 11: t.type = dtype(in.next() % 8); break;
    case 12:  // a padded layout: valid, strided
      for (int d = t.rank - 2; d >= 0; --d) t.strides[d] = t.strides[d + 1] * t.shape[d + 1] + in.next() % 5;
      break;
    case 13:
      if (t.rank > 0) t.strides[in.next() % t.rank] = std::int64_t(in.next() % 4) - 1;
      break;
    case 14: t.device = device_kind(in.next() % 3); break;
    default: break;  // unchanged: most calls keep most tensors valid
  }
}

float random_value(std::mt19937& rng, bool mask) {
  if (mask && rng() % 8 == 0) return -std::numeric_limits<float>::infinity();
  return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
}

// The float elements of `t` (f32) in dense order.
std::vector<float> gather(const tensor_view& t) {
  std::vector<float> values;
  std::int64_t index[tensor_view::max_rank] = {}, count = 1;
  for (int d = 0; d < t.rank; ++d) count *= t.shape[d];
  for (std::int64_t n = 0; n < count; ++n) {
    std::int64_t offset = 0;
    for (int d = 0; d < t.rank; ++d) offset += index[d] * t.strides[d];
    if (t.type == dtype::u8) values.push_back(static_cast<const std::uint8_t*>(t.data)[offset]);
    else values.push_back(static_cast<const float*>(t.data)[offset]);
    for (int d = t.rank - 1; d >= 0 && ++index[d] == t.shape[d]; --d) index[d] = 0;
  }
  return values;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  choices in(data, size);
  const std::int64_t B = in.next() % 4, Lq = in.next() % 21, Lk = in.next() % 21;
  std::mt19937 rng(in.next());
  tensor_view views[tensor_count] = {
      dense(dtype::f32, {B, Lq, 4, 64}), dense(dtype::f32, {B, Lk, 2, 64}), dense(dtype::f32, {B, Lk, 2, 32}),
      dense(dtype::f32, {B, 1, Lq, Lk}), dense(dtype::u8, {B, Lk}),      dense(dtype::f32, {B, Lq, 4, 32}),
      dense(dtype::f32, {B, 4, Lq})};
  bool null_data[tensor_count] = {};
  std::size_t pointer_offset[tensor_count] = {};  // bytes past an element-aligned start
  for (int n = 0; n < tensor_count; ++n) {
    mutate(views[n], in);
    const std::uint8_t pointer = in.next() % 32;
    null_data[n] = pointer == 31;
    pointer_offset[n] = pointer >= 28 && pointer <= 30 ? pointer - 27 : 0;
  }
  const bool output_overlaps_q = in.next() % 32 == 31;

  std::unique_ptr<guarded_buffer> buffers[tensor_count];
  for (int n = 0; n < tensor_count; ++n) {
    tensor_view& t = views[n];
    if (t.empty()) continue;
    const std::int64_t span = span_of(t);
    const std::size_t element = size_of(t.type) ? size_of(t.type) : 4;
    const std::size_t bytes = span < 0 ? 64 : std::size_t(span) * element;
    auto& buffer = buffers[n] = std::make_unique<guarded_buffer>(bytes + (pointer_offset[n] ? 4 : 0));
    for (std::size_t b = 0; b < bytes; b += element) {
      if (t.type == dtype::u8) buffer->data()[pointer_offset[n] + b] = std::uint8_t(rng() % 3 == 0);
      else {
        const float value = random_value(rng, n == 3);
        std::memcpy(buffer->data() + pointer_offset[n] + b, &value, std::min<std::size_t>(element, bytes - b));
      }
    }
    t.data = null_data[n] ? nullptr : buffer->data() + pointer_offset[n];
  }
  if (output_overlaps_q && views[0].data != nullptr) views[5].data = views[0].data;

  std::vector<std::uint8_t> before[tensor_count];
  for (int n = 0; n < tensor_count; ++n)
    if (buffers[n]) before[n] = buffers[n]->bytes();

  attention_args args;
  args.q = views[0], args.k = views[1], args.v = views[2], args.mask = views[3], args.key_padding = views[4],
  args.output = views[5], args.lse = views[6];
  const status s = aot_all_options::run(args);

  if (!s.ok()) {
    bool named = false;
    for (const char* name : names) named = named || s.message().rfind(std::string(name) + ": ", 0) == 0;
    if (!named) violated("an error does not name a tensor", s.message());
    for (int n = 0; n < tensor_count; ++n)
      if (buffers[n] && buffers[n]->bytes() != before[n]) violated("a refused call wrote", names[n]);
    return 0;
  }
  for (int n = 0; n < tensor_count; ++n)
    if (views[n].data != nullptr && span_of(views[n]) > 0 && views[n].device != device_kind::opencl && size_of(views[n].type) > 1 &&
        pointer_offset[n] % size_of(views[n].type) != 0)
      violated("a misaligned pointer was accepted", names[n]);
  for (int n = 0; n < first_output; ++n)
    if (buffers[n] && buffers[n]->bytes() != before[n]) violated("a call changed its input", names[n]);
  attention_problem p;
  p.desc = aot_all_options::description;
  p.batch = int(args.q.shape[0]);
  p.query_length = int(args.q.shape[1]);
  p.key_length = int(args.k.shape[1]);
  if (p.batch == 0 || p.query_length == 0) return 0;  // nothing to compute, nothing written (checked by ctest)
  p.q = gather(args.q), p.k = gather(args.k), p.v = gather(args.v), p.mask = gather(args.mask);
  for (float x : gather(args.key_padding)) p.key_padding.push_back(std::uint8_t(x != 0));
  const auto c = compare_with_reference(p, reference_attention(p), gather(args.output), gather(args.lse));
  if (!c.ok) violated("an accepted call differs from the reference", p.name() + ": " + c.first_failure);
  return 0;
}
