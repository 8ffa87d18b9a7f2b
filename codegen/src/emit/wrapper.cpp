#include "attngen/codegen/wrapper.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <utility>

#include "attngen/arguments.hpp"
#include "attngen/codegen/backward.hpp"
#include "attngen/codegen/compile.hpp"
#include "attngen/codegen/module_algorithm.hpp"
#include "attngen/codegen/visibility_table.hpp"
#include "attngen/module_text_format.hpp"
#include "attngen/text_format.hpp"

#ifndef ATTNGEN_VERSION
#error "ATTNGEN_VERSION must be defined by the build"
#endif

namespace attngen::codegen {

namespace {

std::string quoted_lines(const std::string& text, const std::string& indent) {
  std::ostringstream out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out << indent << "\"" << line << "\\n\"\n";
  return out.str();
}

// Each line of `text` after `prefix`: a comment block of the C++ or the C header.
std::string commented(const std::string& text, const std::string& prefix) {
  std::ostringstream out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out << prefix << line << "\n";
  return out.str();
}

// What differs between an operator's wrapper and a module's.
struct wrapper_kind {
  std::string title;              ///< first words of the struct's comment
  std::string validation_header;  ///< declares validated<D>() for the description type
  std::string description_type, description_cpp, description_text;
  std::string shape_contract;     ///< one line, ending with the header that states it in full
  std::string args_type, entry_type, entries_type, run_function;
  std::string entry_parameters;   ///< of each call_ function, after user_context and buffers
  /// Each generated function's part (see halide_function_name) and its arguments after user_context.
  struct function {
    std::string part, call_arguments;
  };
  std::vector<function> variants;  ///< indexed by kernel_variant; an empty part: not generated
  std::vector<function> shared;    ///< a module's parts that every variant shares, in cpu_module_parts order
  std::vector<function> gpu;       ///< one per GPU API with code, its part the API ("cuda", "opencl")
  /// An operator whose mask modifier reads captures: the function computing the visibility table
  /// (part visibility_part_name; empty part: none), each variant's tiles on each CPU target
  /// ([variant][target]) and the kv heads the table tells apart.
  function visibility;
  std::vector<std::vector<visibility_grid>> visibility_tiles;
  int visibility_heads = 1;
  std::string gpu_targets;        ///< space-separated, recorded in the header
  std::string c_args_type;        ///< the C API's struct for `args_type`
  /// The typed call's parameters (after the `(`, before the GPU options), and the statements of its
  /// body before `return run(args)`; empty: the kind has no typed call.
  std::string typed_parameters, typed_body;
  bool module = false;            ///< modules also get <prefix>_weights_from_state_dict
  /// A description with a backward pass: its CPU functions in one pass (empty part: none) and in two,
  /// one per GPU API with code (in that API's library).
  function backward, backward_two_passes;
  std::vector<function> backward_gpu;
  /// The backward's args struct, its C struct, its contract's header, and the runtime function that
  /// runs it; its typed call (empty parameters: none).
  std::string backward_args_type, backward_c_args_type, backward_header, backward_run_function;
  std::string backward_typed_parameters, backward_typed_body;
};

// A typed call's parameter for `argument`: its name, or for a captured tensor's gradient d_<name>.
template <typename Slot>
std::string parameter_name(const argument<Slot>& argument, const capture_table& captures) {
  if constexpr (std::is_same_v<Slot, backward_slot>)
    if (argument.slot == backward_slot::d_capture)
      return "d_" + std::string(captures.tensors[argument.index].name.view());
  return std::string(argument.name);
}

// A typed call on the tensors of `arguments` in their order: a parameter per tensor (inputs read,
// outputs written), the captured scalars as floats; its body turns them into `args_of`'s arguments
// and returns `callee(...)` on them.
template <typename Slot, int N>
std::pair<std::string, std::string> typed_call(const argument_list<Slot, N>& arguments, const capture_table& captures,
                                               const std::string& args_of, const std::string& extra_arguments,
                                               const std::string& callee) {
  std::string parameters, tensors, scalars;
  for (const argument<Slot>& argument : arguments) {
    if (argument.name == "scalars") {
      for (int n = 0; n < captures.scalar_count; ++n) {
        const std::string scalar(captures.scalars[n].view());
        parameters += ", float " + scalar;
        scalars += (scalars.empty() ? "" : ", ") + scalar;
      }
      continue;
    }
    const std::string parameter = parameter_name(argument, captures);
    parameters += std::string(", attngen::") + (argument.is_output() ? "output_tensor " : "input_tensor ") + parameter;
    tensors += (tensors.empty() ? "" : ", ") + parameter + ".view";
  }
  parameters.erase(0, 2);
  std::string body = "  const attngen::tensor_view tensors[] = {" + tensors + "};\n";
  if (!scalars.empty()) body += "  const float scalars[] = {" + scalars + "};\n";
  body += "  return " + callee + "(" + args_of + "(description, tensors, " +
          std::string(scalars.empty() ? "nullptr" : "scalars") + extra_arguments + "));\n";
  return {parameters, body};
}

// C has no namespaces: the C API's names are prefixed with the namespace's parts, e.g. ns_sub_<name>.
std::string c_prefix(const std::string& cpp_namespace, const std::string& name) {
  std::string prefix;
  for (std::size_t n = 0; n < cpp_namespace.size(); ++n) {
    if (cpp_namespace.compare(n, 2, "::") == 0) {
      prefix += '_';
      ++n;
    } else {
      prefix += cpp_namespace[n];
    }
  }
  return (prefix.empty() ? "" : prefix + "_") + name;
}

// <name>.h: the kernel's C API (attngen/c_api.h).
std::string emit_c_header(const wrapper_kind& kind, const std::string& prefix, const std::string& name,
                          const std::string& targets) {
  std::string guard = "ATTNGEN_KERNEL_" + prefix + "_H";
  for (char& c : guard) c = char(std::toupper(static_cast<unsigned char>(c)));
  std::ostringstream h;
  h << "/* Generated by attngen " << ATTNGEN_VERSION << ". Do not edit: change the description and rebuild. */\n"
    << "#ifndef " << guard << "\n#define " << guard << "\n\n#include \"attngen/c_api.h\"\n\n"
    << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "/* " << kind.title << " `" << name << "` for C (see attngen/c_api.h), generated from the description\n"
    << commented(kind.description_text, " *     ") << " * for the targets " << targets << ".\n *\n"
    << " * Shape contract (outermost first): " << kind.shape_contract << "\n */\n\n"
    << "/* Validates `args` against the description, then runs the kernel. Returns ATTNGEN_OK or the error\n"
    << " * code, also written with its message to `error` unless NULL. On error nothing is written. */\n"
    << "int32_t " << prefix << "_run(const " << kind.c_args_type << "* args, attngen_error* error);\n\n";
  if (!kind.backward.part.empty())
    h << "/* The backward pass (see " << kind.backward_header << "): validates `args`, then writes\n"
      << " * the gradients where the tensors are. Returns as _run does; on error nothing is written. */\n"
      << "int32_t " << prefix << "_backward(const " << kind.backward_c_args_type << "* args, attngen_error* error);\n\n";
  if (kind.module)
    h << "/* Views of the weights in a PyTorch state_dict of this module (see\n"
      << " * attngen::weights_from_state_dict in attngen/runtime/module_call.hpp); `weights` is written only\n"
      << " * on success. */\n"
      << "int32_t " << prefix << "_weights_from_state_dict(const attngen_state_dict_tensor* tensors, size_t count,\n"
      << "                                attngen_mha_weights* weights, attngen_error* error);\n\n";
  h << "/* The kernel's name, targets, attngen version and description, as text (static storage). */\n"
    << "const char* " << prefix << "_record(void);\n\n"
    << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return h.str();
}

// The names separated by spaces.
std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : " ") + name;
  return text;
}

wrapper_sources emit(const wrapper_kind& kind, const std::string& name, const std::string& cpp_namespace,
                     int single_query_threshold, const std::vector<std::string>& target_names) {
  const std::string targets = joined(target_names);
  const std::string open_ns = cpp_namespace.empty() ? "" : "namespace " + cpp_namespace + " {\n\n";
  const std::string close_ns = cpp_namespace.empty() ? "" : "\n}  // namespace " + cpp_namespace + "\n";

  std::ostringstream h;
  h << "// Generated by attngen " << ATTNGEN_VERSION << ". Do not edit: change the description and rebuild.\n"
    << "#pragma once\n\n#include \"attngen/runtime.hpp\"\n#include \"" << kind.validation_header << "\"\n\n"
    << open_ns << "/// " << kind.title << " `" << name << "`, generated from the description\n"
    << commented(kind.description_text, "///     ") << "/// for the targets " << targets << ".\n"
    << "///\n/// Shape contract (outermost first): " << kind.shape_contract << "\n"
    << "struct " << name << " {\n"
    << "  static constexpr const char* name = \"" << name << "\";\n"
    << "  static constexpr " << kind.description_type << " description = attngen::validated<" << kind.description_cpp
    << ">();\n"
    << "  /// The description in attngen's text form.\n"
    << "  static constexpr const char* description_text =\n"
    << quoted_lines(kind.description_text, "      ") << "      ;\n"
    << "  /// Halide targets compiled in, most capable first; the first the CPU supports runs.\n"
    << "  static constexpr const char* targets = \"" << targets << "\";\n"
    << "  /// GPU targets compiled in (calls with tensors on that device run there); empty for CPU only.\n"
    << "  static constexpr const char* gpu_targets = \"" << kind.gpu_targets << "\";\n"
    << "  static constexpr const char* attngen_version = \"" << ATTNGEN_VERSION << "\";\n"
    << "  // attngen::kernel_record<" << name << ">() prints all of the above.\n\n"
    << "  /// Validates `args` against the description, then runs the kernel. On error nothing is written.\n"
    << "  static attngen::status run(const " << kind.args_type << "& args);\n";
  if (!kind.typed_parameters.empty())
    h << "  /// The same, on exactly the tensors the description takes: inputs are read, outputs written (a\n"
      << "  /// view of const memory is not an output), so a missing or extra tensor does not compile.\n"
      << "  static attngen::status run(" << kind.typed_parameters << ", const attngen::gpu_options& gpu = {});\n";
  if (!kind.backward.part.empty())
    h << "  /// The backward pass (" << kind.backward_header << "): validates `args`, then writes the\n"
      << "  /// gradients, where the tensors are (as run does). On error nothing is written.\n"
      << "  static attngen::status backward(const " << kind.backward_args_type << "& args);\n";
  if (!kind.backward_typed_parameters.empty())
    h << "  /// The same, on exactly the tensors the backward pass takes.\n"
      << "  static attngen::status backward(" << kind.backward_typed_parameters
      << ", const attngen::gpu_options& gpu = {});\n";
  h << "};\n" << close_ns;

  std::ostringstream c;
  c << "// Generated by attngen " << ATTNGEN_VERSION << ". Do not edit.\n"
    << "#include \"" << name << ".hpp\"\n#include \"" << name << ".h\"\n\n#include <string>\n\n";
  std::vector<wrapper_kind::function> functions;
  for (const auto& f : kind.variants)
    if (!f.part.empty()) functions.push_back(f);
  functions.insert(functions.end(), kind.shared.begin(), kind.shared.end());
  functions.insert(functions.end(), kind.gpu.begin(), kind.gpu.end());
  if (!kind.backward.part.empty()) functions.insert(functions.end(), {kind.backward, kind.backward_two_passes});
  functions.insert(functions.end(), kind.backward_gpu.begin(), kind.backward_gpu.end());
  for (const auto& f : functions) c << "#include \"" << halide_function_name(name, f.part) << ".h\"\n";
  if (!kind.visibility.part.empty()) c << "#include \"" << halide_function_name(name, kind.visibility.part) << ".h\"\n";
  c << "#include \"attngen/runtime/detail/c_bridge.hpp\"\n#include \"attngen/runtime/detail/kernel_bridge.hpp\"\n#include \"attngen/runtime/detail/variants.hpp\"\n\n"
    << open_ns;
  // An operator's CUDA code comes with its tensor-core record (NAME_tensorcore.cpp, maybe empty).
  const bool tensorcore = !kind.module && std::any_of(kind.gpu.begin(), kind.gpu.end(), [](const auto& f) {
    return f.part == "cuda";
  });
  if (tensorcore) c << "extern const attngen::detail::tensorcore_kernel " << name << "_tensorcore_kernel;\n\n";
  // An operator's AMX record (NAME_amx.cpp, maybe empty).
  if (!kind.module) c << "extern const attngen::detail::amx_kernel " << name << "_amx_kernel;\n\n";
  c << "namespace {\n\n";
  auto call = [&](const std::string& part) { return "call_" + halide_function_name(name, part); };
  for (const auto& f : functions) {
    const std::string function = halide_function_name(name, f.part);
    c << "int " << call(f.part) << "(void* user_context, halide_buffer_t* const* buffers" << kind.entry_parameters
      << ") {\n"
      << "  return " << function << "(user_context" << f.call_arguments << ");\n}\n\n";
  }
  if (!kind.visibility.part.empty())
    c << "int " << call(kind.visibility.part)
      << "(void* user_context, halide_buffer_t* const* buffers, std::int32_t query_length,\n"
      << "    std::int32_t key_length, std::int32_t tile_queries, std::int32_t block_keys) {\n"
      << "  return " << halide_function_name(name, kind.visibility.part) << "(user_context"
      << kind.visibility.call_arguments << ");\n}\n\n";
  c << "}  // namespace\n\n"
    << "attngen::status " << name << "::run(const " << kind.args_type << "& args) {\n"
    << "  // Indexed by attngen::kernel_variant.\n"
    << "  static constexpr " << kind.entry_type << " variants[] = {";
  for (std::size_t v = 0; v < kind.variants.size(); ++v)
    c << (v ? ", " : "") << (kind.variants[v].part.empty() ? "nullptr" : "&" + call(kind.variants[v].part));
  c << "};\n";
  auto gpu_entry_in = [&](const std::vector<wrapper_kind::function>& gpu_functions, const std::string& part) {
    for (const auto& f : gpu_functions)
      if (f.part == part) return "&" + call(f.part);
    return std::string("nullptr");
  };
  auto gpu_entry = [&](const char* api) { return gpu_entry_in(kind.gpu, api); };
  if (kind.module) {
    // A module's CPU code is its variant's attention between the parts every variant shares, each
    // named by its part (attngen::detail::module_cpu_parts).
    c << "  const auto variant = attngen::detail::variant_for(args, description, " << single_query_threshold << ");\n";
    std::string cpu_entry = "{.attention = variants[int(variant)]";
    for (const auto& f : kind.shared) cpu_entry += ", ." + f.part + " = &" + call(f.part);
    cpu_entry += "}";
    c << "  const " << kind.entries_type << " entries{" << cpu_entry << ", " << gpu_entry("cuda") << ", "
      << gpu_entry("opencl") << "};\n"
      << "  return " << kind.run_function << "(description, args, entries);\n}\n";
  } else {
    // An operator's runtime picks the variant per call, or per sequence where sequences differ.
    std::string visibility = "nullptr";
    if (!kind.visibility.part.empty()) {
      std::vector<visibility_layout> layouts;
      for (const auto& target_tiles : kind.visibility_tiles) layouts.push_back(visibility_table_layout(target_tiles));
      c << "  // Each variant's table: its finest tiles over the targets, and each target's tiles in them.\n"
        << "  static constexpr attngen::detail::visibility_ratio ratios[][" << kind.visibility_tiles[0].size() << "] = {";
      for (std::size_t v = 0; v < layouts.size(); ++v) {
        c << (v ? ", " : "") << "{";
        for (std::size_t t = 0; t < layouts[v].ratios.size(); ++t)
          c << (t ? ", " : "") << "{" << layouts[v].ratios[t].tiles << ", " << layouts[v].ratios[t].blocks << "}";
        c << "}";
      }
      c << "};\n  static constexpr attngen::detail::visibility_entry visibility[] = {";
      for (std::size_t v = 0; v < layouts.size(); ++v)
        c << (v ? ",\n      " : "\n      ") << "{&" << call(kind.visibility.part) << ", " << layouts[v].finest.queries
          << ", " << layouts[v].finest.keys << ", " << kind.visibility_heads << ", " << kind.visibility_tiles[0].size()
          << ", ratios[" << v << "]}";
      c << "};\n";
      visibility = "visibility";
    }
    c << "  static constexpr " << kind.entries_type << " kernel{variants, " << visibility << ", "
      << single_query_threshold << ", " << gpu_entry("cuda") << ", " << gpu_entry("opencl") << ", "
      << (tensorcore ? "&" + name + "_tensorcore_kernel" : std::string("nullptr")) << ", &" << name << "_amx_kernel};\n"
      << "  return " << kind.run_function << "(description, args, kernel);\n}\n";
  }
  if (!kind.typed_parameters.empty())
    c << "\nattngen::status " << name << "::run(" << kind.typed_parameters << ", const attngen::gpu_options& gpu) {\n"
      << kind.typed_body << "}\n";
  if (!kind.backward.part.empty())
    c << "\nattngen::status " << name << "::backward(const " << kind.backward_args_type << "& args) {\n"
      << "  static constexpr attngen::detail::backward_entries<" << kind.entry_type << "> entries{&"
      << call(kind.backward.part) << ", &" << call(kind.backward_two_passes.part) << ", "
      << gpu_entry_in(kind.backward_gpu, gpu_backward_part_name("cuda")) << ", "
      << gpu_entry_in(kind.backward_gpu, gpu_backward_part_name("opencl")) << "};\n"
      << "  return " << kind.backward_run_function << "(description, args, entries);\n}\n";
  if (!kind.backward_typed_parameters.empty())
    c << "\nattngen::status " << name << "::backward(" << kind.backward_typed_parameters
      << ", const attngen::gpu_options& gpu) {\n"
      << kind.backward_typed_body << "}\n";
  c << close_ns;
  const std::string qualified = (cpp_namespace.empty() ? "" : cpp_namespace + "::") + name;
  const std::string prefix = c_prefix(cpp_namespace, name);
  c << "\n// The C API (" << name << ".h).\nextern \"C\" {\n\n"
    << "int32_t " << prefix << "_run(const " << kind.c_args_type << "* args, attngen_error* error) {\n"
    << "  return attngen::detail::run_from_c(" << qualified << "::description, args, error, &" << qualified
    << "::run);\n}\n\n";
  if (!kind.backward.part.empty())
    c << "int32_t " << prefix << "_backward(const " << kind.backward_c_args_type << "* args, attngen_error* error) {\n"
      << "  return attngen::detail::run_from_c(" << qualified << "::description, args, error,\n"
      << "                                     static_cast<attngen::status (*)(const " << kind.backward_args_type
      << "&)>(&" << qualified << "::backward));\n}\n\n";
  if (kind.module)
    c << "int32_t " << prefix << "_weights_from_state_dict(const attngen_state_dict_tensor* tensors, size_t count,\n"
      << "                                attngen_mha_weights* weights, attngen_error* error) {\n"
      << "  return attngen::detail::weights_from_state_dict_from_c(" << qualified
      << "::description, tensors, count, weights, error);\n}\n\n";
  // No exception may reach a C caller: out of memory, the record says so.
  c << "const char* " << prefix << "_record(void) {\n"
    << "  try {\n"
    << "    static const std::string record = attngen::kernel_record<" << qualified << ">();\n"
    << "    return record.c_str();\n"
    << "  } catch (...) {\n"
    << "    return \"attngen: out of memory while writing the kernel record\";\n"
    << "  }\n}\n\n}  // extern \"C\"\n";
  return {h.str(), c.str(), emit_c_header(kind, prefix, name, targets)};
}

// "q (B, Lq, 32, 128), k (B, Lk, 8, 128), ..., lse (B, 32, Lq) f32": each argument with its extents,
// run-time ones by symbol, and its element type where it is not the description's.
template <typename Slot, int N>
std::string shape_contract(const argument_list<Slot, N>& arguments) {
  std::string text;
  const dtype element = arguments[0].type;
  for (const argument<Slot>& argument : arguments) {
    text += (text.empty() ? "" : ", ") + std::string(argument.name) + " (";
    for (int d = 0; d < argument.rank; ++d) {
      const argument_dim& dim = argument.dims[d];
      text += (d ? ", " : "") +
              (dim.source == extent_source::description ? std::to_string(dim.extent) : std::string(dim.symbol));
    }
    text += ")";
    if (argument.type != element) text += " " + std::string(name_of(argument.type));
  }
  return text;
}

// ", buffers[first], ..., buffers[first + count - 1]"
std::string buffer_arguments(int first, int count) {
  std::string arguments;
  for (int n = first; n < first + count; ++n) arguments += ", buffers[" + std::to_string(n) + "]";
  return arguments;
}

}  // namespace

wrapper_sources emit_wrapper(const std::string& name, const std::string& cpp_namespace, const attention_desc& desc,
                             int single_query_threshold,
                             const std::vector<std::vector<visibility_grid>>& visibility_tiles,
                             const std::vector<std::string>& target_names,
                             const std::vector<std::string>& gpu_apis, const std::vector<std::string>& gpu_target_names) {
  const attention_argument_table arguments = kernel_arguments(desc);
  // The visibility part's buffers: the captured tensors and scalars, then its table.
  const int captures = int(std::count_if(arguments.begin(), arguments.end(), read_by_visibility_table));
  wrapper_kind kind;
  kind.title = "Fused attention kernel";
  kind.validation_header = "attngen/validation.hpp";
  kind.description_type = "attngen::attention_desc";
  kind.description_cpp = to_cpp(desc);
  kind.description_text = to_text(desc);
  kind.shape_contract = shape_contract(arguments) + "; see attngen/runtime/attention_call.hpp.";
  kind.args_type = "attngen::attention_args";
  kind.entry_type = "attngen::detail::generated_entry";
  kind.entries_type = "attngen::detail::attention_kernel";
  kind.run_function = "attngen::detail::run_attention_kernel";
  // CPU variants take the visibility table after the captures, where there is one.
  const bool takes_table = !visibility_tiles.empty();
  for (int v = 0; v < kernel_variant_count; ++v)
    kind.variants.push_back({name_of(kernel_variant(v)), buffer_arguments(0, arguments.size() + int(takes_table))});
  if (takes_table) {
    kind.visibility = {visibility_part_name, buffer_arguments(0, captures) +
                                                 ", query_length, key_length, tile_queries, block_keys" +
                                                 buffer_arguments(captures, 1)};
    kind.visibility_tiles = visibility_tiles;
    kind.visibility_heads = visibility_table_heads(desc);
  }
  for (const auto& api : gpu_apis) kind.gpu.push_back({api, buffer_arguments(0, arguments.size())});
  kind.gpu_targets = joined(gpu_target_names);
  kind.c_args_type = "attngen_attention_args";
  // The typed calls: a parameter per argument, in the schema's order, the captured scalars as floats.
  std::tie(kind.typed_parameters, kind.typed_body) =
      typed_call(arguments, desc.captures, "attngen::detail::attention_args_of", ", gpu", "run");
  if (desc.backward) {
    const backward_argument_table_type backward = backward_arguments(desc);
    kind.backward = {backward_part_name, buffer_arguments(0, backward.size())};
    kind.backward_two_passes = {backward_two_passes_part_name, kind.backward.call_arguments};
    for (const auto& api : gpu_apis) kind.backward_gpu.push_back({gpu_backward_part_name(api), kind.backward.call_arguments});
    kind.backward_args_type = "attngen::attention_backward_args";
    kind.backward_c_args_type = "attngen_attention_backward_args";
    kind.backward_header = "attngen/runtime/attention_backward_call.hpp";
    kind.backward_run_function = "attngen::detail::run_attention_backward";
    std::tie(kind.backward_typed_parameters, kind.backward_typed_body) =
        typed_call(backward, desc.captures, "attngen::detail::attention_backward_args_of", ", gpu", "backward");
  }
  return emit(kind, name, cpp_namespace, single_query_threshold, target_names);
}

wrapper_sources emit_module_wrapper(const std::string& name, const std::string& cpp_namespace, const mha_desc& desc,
                                    int single_query_threshold, const std::vector<std::string>& target_names,
                                    const std::vector<std::string>& gpu_apis,
                                    const std::vector<std::string>& gpu_target_names) {
  const module_argument_table arguments = kernel_arguments(desc);
  const bool dropout = desc.has_dropout();
  // A part's function takes its input buffers, the dropout scalars where it takes them, then its
  // output buffers (attngen/module_arguments.hpp).
  auto call_of = [&](module_part part) {
    const module_argument_table buffers = part_arguments(desc, part);
    const int inputs = buffers.first_output();
    return buffer_arguments(0, inputs) + (takes_dropout_scalars(desc, part) ? ", training, seed" : "") +
           buffer_arguments(inputs, buffers.size() - inputs);
  };
  wrapper_kind kind;
  kind.title = "Fused multi-head attention module";
  kind.validation_header = "attngen/module_validation.hpp";
  kind.description_type = "attngen::mha_desc";
  kind.description_cpp = to_cpp(desc);
  kind.description_text = to_text(desc);
  kind.shape_contract = shape_contract(arguments) + "; weights (out, in) as PyTorch's; see attngen/runtime/module_call.hpp.";
  kind.args_type = "attngen::mha_args";
  kind.entry_type = "attngen::detail::generated_module_entry";
  kind.entries_type = "attngen::detail::module_entries";
  kind.run_function = "attngen::detail::run_module_kernel";
  kind.entry_parameters = dropout ? ", bool training, std::uint64_t seed" : ", bool, std::uint64_t";
  for (int v = 0; v < kernel_variant_count; ++v) {
    const bool generated = module_has_variant(kernel_variant(v), desc.self_attn);
    kind.variants.push_back({generated ? name_of(kernel_variant(v)) : "", call_of(module_part::attention)});
  }
  for (const module_part part : cpu_module_parts(desc))
    if (part != module_part::attention) kind.shared.push_back({name_of(part), call_of(part)});
  for (const auto& api : gpu_apis) kind.gpu.push_back({api, call_of(module_part::whole)});
  kind.gpu_targets = joined(gpu_target_names);
  kind.c_args_type = "attngen_mha_args";
  kind.module = true;
  // The typed call: a parameter per tensor in the schema's order, the weights as one mha_weights
  // (where the first of them is), then the dropout scalars.
  std::string tensors;
  for (const module_argument& argument : arguments) {
    if (is_weight(argument)) {
      if (argument.slot == module_slot::q_weight) kind.typed_parameters += ", const attngen::mha_weights& weights";
      continue;
    }
    const std::string parameter(argument.name);
    kind.typed_parameters +=
        std::string(", attngen::") + (argument.is_output() ? "output_tensor " : "input_tensor ") + parameter;
    tensors += (tensors.empty() ? "" : ", ") + parameter + ".view";
  }
  if (dropout) kind.typed_parameters += ", bool training, std::uint64_t seed";
  if (desc.backward) {
    kind.backward = {backward_part_name, call_of(module_part::backward)};
    kind.backward_two_passes = {backward_two_passes_part_name, kind.backward.call_arguments};
    for (const auto& api : gpu_apis) kind.backward_gpu.push_back({gpu_backward_part_name(api), kind.backward.call_arguments});
    kind.backward_args_type = "attngen::mha_backward_args";
    kind.backward_c_args_type = "attngen_mha_backward_args";
    kind.backward_header = "attngen/runtime/module_call.hpp";
    kind.backward_run_function = "attngen::detail::run_module_backward";
  }
  kind.typed_parameters.erase(0, 2);
  kind.typed_body = "  const attngen::tensor_view tensors[] = {" + tensors + "};\n" +
                    "  return run(attngen::detail::mha_args_of(description, tensors, weights, " +
                    (dropout ? "training, seed" : "false, 0") + ", gpu));\n";
  return emit(kind, name, cpp_namespace, single_query_threshold, target_names);
}

}  // namespace attngen::codegen
