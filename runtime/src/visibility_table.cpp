#include "visibility_table.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <new>
#include <string>

#include "attention_views.hpp"

namespace attngen::detail {

status compute_visibility_table(const attention_desc& desc, const visibility_entry& visibility,
                                const attention_args& args, const tensor_view& scalars, const call_extents& extents,
                                call_context& context, gpu_call& host, std::vector<std::uint8_t>& bytes,
                                tensor_view& slices) {
  if (visibility.compute == nullptr) return {};
  const std::int64_t queries = extents.queries, keys = extents.keys;
  const visibility_table_extents finest{extents.batch, visibility.heads,
                                        (queries + visibility.tile_queries - 1) / visibility.tile_queries,
                                        (keys + visibility.block_keys - 1) / visibility.block_keys};
  const std::int64_t count = finest.batch * finest.heads * finest.tiles * finest.blocks;
  if (count * visibility.targets > std::numeric_limits<std::int32_t>::max())
    return status(error_code::too_large, "q and k: the mask modifier's visibility table would have " +
                                             std::to_string(count * visibility.targets) +
                                             " entries, past the kernel's 32-bit indexing");
  try {
    bytes.assign(std::size_t(count * (1 + visibility.targets)), 0);
  } catch (const std::bad_alloc&) {
    return status(error_code::kernel_failed, "q and k: cannot allocate the mask modifier's visibility table (" +
                                                 std::to_string(count * (1 + visibility.targets)) + " bytes)");
  }
  const tensor_view table = make_tensor(bytes.data(), {finest.batch, finest.heads, finest.tiles, finest.blocks});
  // The part's buffers: the kernel's captured tensors and scalars (attngen/arguments.hpp), then the table.
  static const tensor_view none;
  const tensor_view* views[capture_table::max_tensors + 2];
  std::fill(std::begin(views), std::end(views), &none);
  int given = 0;
  for (const kernel_argument& argument : kernel_arguments(desc))
    if (read_by_visibility_table(argument))
      views[given++] = argument.slot == argument_slot::scalars ? &scalars : given_view(args, argument);
  views[given++] = &table;
  int batch_dims[std::size(views)];
  std::fill(std::begin(batch_dims), std::end(batch_dims), -1);
  batch_dims[given - 1] = 0;
  kernel_buffers<int(std::size(views))> buffers;
  // On the host, attaching only wraps the views: it cannot fail.
  if (status s = buffers.attach(host, views, given - 1, false, batch_dims, extents.first_batch); !s) return s;
  const int result = visibility.compute(&context, buffers.data(), std::int32_t(queries), std::int32_t(keys),
                                        visibility.tile_queries, visibility.block_keys);
  if (result != 0) return finish_call(context, result);
  fill_visibility_slices(bytes.data(), finest, visibility.ratios, visibility.targets, bytes.data() + count);
  slices = make_tensor(bytes.data() + count,
                       {finest.batch, visibility.targets * finest.heads, finest.tiles, finest.blocks});
  return {};
}

}  // namespace attngen::detail
