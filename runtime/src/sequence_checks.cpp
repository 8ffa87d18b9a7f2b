#include "sequence_checks.hpp"

#include <string>

#include "tensor_checks.hpp"

namespace attngen::detail {

using sequence_cut::element;
using sequence_cut::key_capacity;
using sequence_cut::page_entry;

status check_offsets(const char* name, const tensor_view& offsets, std::int64_t sequences, std::int64_t total,
                     const std::string& total_text) {
  const std::string n = name;
  if (element(offsets, 0) != 0)
    return fail(error_code::wrong_shape, name, "must start at 0, got " + n + "[0] = " + std::to_string(element(offsets, 0)));
  for (std::int64_t b = 0; b < sequences; ++b) {
    const std::int64_t first = element(offsets, b), next = element(offsets, b + 1);
    if (next < first)
      return fail(error_code::wrong_shape, name,
                  "decreases at sequence " + std::to_string(b) + ": " + n + "[" + std::to_string(b) + "] = " +
                      std::to_string(first) + ", " + n + "[" + std::to_string(b + 1) + "] = " + std::to_string(next));
    if (next > total)
      return fail(error_code::wrong_shape, name,
                  n + "[" + std::to_string(b + 1) + "] = " + std::to_string(next) + " exceeds " + total_text);
  }
  return {};
}

status check_sequence_tensors(const attention_desc& desc, const attention_args& args) {
  const std::int64_t sequences = sequence_count(desc, args);
  if (desc.is_ragged()) {
    const std::int64_t total = args.q.shape[0];
    if (status s = check_offsets("q_offsets", args.q_offsets, sequences, total,
                                 "total_q (" + std::to_string(total) + ", the rows of q)");
        !s)
      return s;
  }
  if (!desc.has_kv_lengths()) return {};
  const std::int64_t capacity = key_capacity(desc, args);
  const char* capacity_text = desc.is_paged() ? "the keys its page table row holds (max_pages x page_size)" : "Lk";
  for (std::int64_t b = 0; b < sequences; ++b) {
    const std::int64_t keys = element(args.kv_lengths, b);
    if (keys < 0 || keys > capacity)
      return fail(error_code::wrong_shape, "kv_lengths",
                  "kv_lengths[" + std::to_string(b) + "] = " + std::to_string(keys) + " is outside 0 to " +
                      std::to_string(capacity) + ", " + capacity_text);
    if (!desc.is_paged()) continue;
    const std::int64_t pages = args.k.shape[0];
    for (std::int64_t p = 0; p * desc.kv_page_size < keys; ++p) {
      const std::int32_t page = page_entry(args.page_table, b, p);
      if (page < 0 || page >= pages)
        return fail(error_code::wrong_shape, "page_table",
                    "page_table[" + std::to_string(b) + "][" + std::to_string(p) + "] = " + std::to_string(page) +
                        " is outside the pool's pages 0 to " + std::to_string(pages - 1) + " (sequence " +
                        std::to_string(b) + " has " + std::to_string(keys) + " keys)");
    }
  }
  return {};
}

}  // namespace attngen::detail
