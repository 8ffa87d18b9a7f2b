#include "attngen/runtime/merge.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "element_access.hpp"
#include "tensor_checks.hpp"

namespace attngen {

namespace {

using detail::check_layout;
using detail::expected_dim;
using detail::fail;

constexpr const char* merge_on_host = "merge reads and writes host tensors";

// The rows' extents: (batch, queries, heads, features), batch 1 for packed tensors.
struct merge_extents {
  std::int64_t batch, queries, heads, features;
};

bool same_view(const tensor_view& a, const tensor_view& b) {
  if (a.data != b.data || a.type != b.type || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

// The pair (output, lse) named `prefix`.output and `prefix`.lse against the extents `e` and the
// packing of `packed`.
status check_pair(const std::string& prefix, const tensor_view& output, const tensor_view& lse,
                  const merge_extents& e, bool packed) {
  const std::string output_name = prefix + "output", lse_name = prefix + "lse";
  for (const auto& [name, view] : {std::pair{&output_name, &output}, std::pair{&lse_name, &lse}})
    if (status s = detail::check_on_host(name->c_str(), *view, merge_on_host); !s) return s;
  if (status s = detail::check_float_element(output_name.c_str(), output); !s) return s;
  const expected_dim heads{"heads", e.heads, "output", true}, features{"v head_dim", e.features, "output"};
  const expected_dim queries{packed ? "total_q" : "Lq", e.queries, "output"}, batch{"batch", e.batch, "output"};
  const std::vector<expected_dim> output_dims =
      packed ? std::vector<expected_dim>{queries, heads, features} : std::vector<expected_dim>{batch, queries, heads, features};
  const std::vector<expected_dim> lse_dims =
      packed ? std::vector<expected_dim>{heads, queries} : std::vector<expected_dim>{batch, heads, queries};
  if (status s = check_layout(output_name.c_str(), output, output.type, packed ? "(total_q, H, Dv)" : "(B, Lq, H, Dv)",
                              output_dims);
      !s)
    return s;
  return check_layout(lse_name.c_str(), lse, dtype::f32, packed ? "(H, total_q)" : "(B, H, Lq)", lse_dims);
}

status check_merge(const attention_partial* parts, int count, const tensor_view& output, const tensor_view& lse,
                   const tensor_view& sinks, merge_extents& e) {
  if (count < 0) return fail(error_code::wrong_shape, "parts", "count is negative (" + std::to_string(count) + ")");
  if (count > 0 && parts == nullptr) return fail(error_code::null_pointer, "parts", "is null with a count of " + std::to_string(count));
  if (output.rank != 3 && output.rank != 4)
    return fail(error_code::wrong_rank, "output",
                "expected rank 4 (B, Lq, H, Dv) or 3 (total_q, H, Dv), got rank " + std::to_string(output.rank));
  const bool packed = output.rank == 3;
  const int first = packed ? 0 : 1;  // the queries' dimension
  e = {packed ? 1 : output.shape[0], output.shape[first], output.shape[first + 1], output.shape[first + 2]};
  if (status s = check_pair("", output, lse, e, packed); !s) return s;
  if (status s = detail::check_writable("output", output); !s) return s;
  if (status s = detail::check_writable("lse", lse); !s) return s;
  if (status s = detail::check_distinct_elements("output", output); !s) return s;
  if (status s = detail::check_distinct_elements("lse", lse); !s) return s;
  if (detail::overlap(output, lse)) return fail(error_code::wrong_shape, "lse", "overlaps output in memory");
  for (int n = 0; n < count; ++n) {
    const std::string prefix = "parts[" + std::to_string(n) + "].";
    if (status s = check_pair(prefix, parts[n].output, parts[n].lse, e, packed); !s) return s;
    struct written_and_read {
      const tensor_view& written;
      const char* written_name;
      const tensor_view& read;
      const char* read_name;
    };
    for (const written_and_read& pair : {written_and_read{output, "output", parts[n].output, "output"},
                                         written_and_read{output, "output", parts[n].lse, "lse"},
                                         written_and_read{lse, "lse", parts[n].output, "output"},
                                         written_and_read{lse, "lse", parts[n].lse, "lse"}}) {
      if (!detail::overlap(pair.written, pair.read) || same_view(pair.written, pair.read)) continue;
      return fail(error_code::wrong_shape, pair.written_name,
                  "overlaps " + prefix + pair.read_name + " in memory other than as the same tensor (merging in place)");
    }
  }
  if (!sinks.empty()) {
    if (status s = detail::check_on_host("sinks", sinks, merge_on_host); !s) return s;
    if (status s = check_layout("sinks", sinks, dtype::f32, "(H)", {{"heads", e.heads, "output", true}}); !s) return s;
  }
  return {};
}

}  // namespace

status merge(const attention_partial* parts, int count, const tensor_view& output, const tensor_view& lse,
             const tensor_view& sinks) {
  merge_extents e{0, 0, 0, 0};
  if (status s = check_merge(parts, count, output, lse, sinks, e); !s) return s;
  const bool packed = output.rank == 3;
  const int first = packed ? 0 : 1;  // the dimension after the batch's
  // Element offsets of row (b, i, h) in an output and a log-sum-exp of the call's layout.
  auto output_offset = [&](const tensor_view& t, std::int64_t b, std::int64_t i, std::int64_t h) {
    return (packed ? 0 : b * t.strides[0]) + i * t.strides[first] + h * t.strides[first + 1];
  };
  auto lse_offset = [&](const tensor_view& t, std::int64_t b, std::int64_t i, std::int64_t h) {
    return (packed ? 0 : b * t.strides[0]) + h * t.strides[first] + i * t.strides[first + 1];
  };
  const double minus_inf = -std::numeric_limits<double>::infinity();
  const std::size_t part_count = std::size_t(count), features = std::size_t(e.features);
  std::vector<double> part_lse(part_count), weights(part_count), row(features);
  for (std::int64_t b = 0; b < e.batch; ++b)
    for (std::int64_t i = 0; i < e.queries; ++i)
      for (std::int64_t h = 0; h < e.heads; ++h) {
        double largest = minus_inf;
        bool nan = false;
        for (int n = 0; n < count; ++n) {
          const tensor_view& l = parts[n].lse;
          part_lse[std::size_t(n)] = detail::load(dtype::f32, detail::element_address(l, lse_offset(l, b, i, h)));
          nan = nan || std::isnan(part_lse[std::size_t(n)]);
          largest = std::max(largest, part_lse[std::size_t(n)]);
        }
        const double sink = sinks.empty() ? minus_inf : double(static_cast<const float*>(sinks.data)[h * sinks.strides[0]]);
        if (!nan) largest = std::max(largest, sink);
        double total = 0.0;
        if (largest != minus_inf && !nan) {
          for (int n = 0; n < count; ++n) total += std::exp(part_lse[std::size_t(n)] - largest);
          if (sink != minus_inf) total += std::exp(sink - largest);
        }
        const double row_lse = nan ? std::numeric_limits<double>::quiet_NaN()
                                   : largest == minus_inf ? minus_inf : largest + std::log(total);
        for (int n = 0; n < count; ++n)
          weights[std::size_t(n)] = part_lse[std::size_t(n)] == minus_inf || largest == minus_inf
                                        ? 0.0
                                        : std::exp(part_lse[std::size_t(n)] - row_lse);
        std::fill(row.begin(), row.end(), nan ? std::numeric_limits<double>::quiet_NaN() : 0.0);
        for (int n = 0; n < count && !nan; ++n) {
          if (weights[std::size_t(n)] == 0.0) continue;
          const tensor_view& o = parts[n].output;
          const std::uint8_t* from = detail::element_address(o, output_offset(o, b, i, h));
          for (std::int64_t x = 0; x < e.features; ++x)
            row[std::size_t(x)] += weights[std::size_t(n)] * detail::load(o.type, from + x * size_of(o.type));
        }
        std::uint8_t* to = detail::element_address(output, output_offset(output, b, i, h));
        for (std::int64_t x = 0; x < e.features; ++x) detail::store(output.type, float(row[std::size_t(x)]), to + x * size_of(output.type));
        detail::store(dtype::f32, float(row_lse), detail::element_address(lse, lse_offset(lse, b, i, h)));
      }
  return {};
}

}  // namespace attngen
