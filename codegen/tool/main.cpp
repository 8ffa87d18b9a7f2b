// attngen: the command-line generator. The CMake function attngen_add_kernel runs it at build time.
//
//   attngen generate --description FILE --name NAME --target T [--target T ...]
//                    --output-dir DIR [--namespace NS]
//   attngen runtime  --target T --output FILE.a
//   attngen targets

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attngen/codegen/compile.hpp"
#include "attngen/codegen/targets.hpp"
#include "attngen/module_text_format.hpp"
#include "attngen/text_format.hpp"

namespace {

constexpr const char* usage =
    "usage:\n"
    "  attngen generate --description FILE --name NAME --target T [--target T ...] --output-dir DIR\n"
    "                   [--namespace NS]\n"
    "      Compiles the text description in FILE (an operator, or a module: first line\n"
    "      `kind = module`) into one library and header per kernel variant,\n"
    "      DIR/NAME_halide_VARIANT.a and .h (VARIANT: general, short_keys, single_query,\n"
    "      short_queries), and the C++ wrapper DIR/NAME.hpp, DIR/NAME.cpp that picks a variant per\n"
    "      call. Several --target values build libraries that dispatch at run time to the first\n"
    "      target the CPU supports; list the most capable first and a baseline last.\n"
    "      GPU targets (at most one with `cuda`, one with `opencl`; operators only) add\n"
    "      DIR/NAME_halide_cuda.a or DIR/NAME_halide_opencl.a: calls with tensors on that device\n"
    "      run there, e.g. --target x86-64-linux-cuda-cuda_capability_80.\n"
    "  attngen runtime --target T --output FILE.a\n"
    "      Writes the Halide runtime that all kernels of an app share.\n"
    "  attngen targets\n"
    "      Prints the targets this machine's CPU runs, best first.\n"
    "Targets are Halide target strings, e.g. x86-64-linux-avx512_skylake-fma-f16c; `host` is refused.\n";

struct options {
  std::string command, description, name, output_dir, output, cpp_namespace;
  std::vector<std::string> targets;
};

options parse(int argc, char** argv) {
  if (argc < 2) throw std::invalid_argument("no command given");
  options o;
  o.command = argv[1];
  for (int n = 2; n < argc; ++n) {
    const std::string flag = argv[n];
    if (flag == "--help" || flag == "-h") throw std::invalid_argument("");
    if (n + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++n];
    if (flag == "--description") o.description = value;
    else if (flag == "--name") o.name = value;
    else if (flag == "--target") o.targets.push_back(value);
    else if (flag == "--output-dir") o.output_dir = value;
    else if (flag == "--output") o.output = value;
    else if (flag == "--namespace") o.cpp_namespace = value;
    else throw std::invalid_argument("unknown option " + flag);
  }
  return o;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void require(bool condition, const char* what) {
  if (!condition) throw std::invalid_argument(what);
}

int generate(const options& o) {
  require(!o.description.empty(), "generate needs --description");
  require(!o.name.empty(), "generate needs --name");
  require(!o.targets.empty(), "generate needs at least one --target");
  require(!o.output_dir.empty(), "generate needs --output-dir");
  const std::string text = read_file(o.description);
  attngen::codegen::kernel_request request;
  if (attngen::is_module_text(text)) {
    const auto parsed = attngen::parse_module_description(text);
    if (!parsed.error.empty()) throw std::runtime_error(o.description + ": " + parsed.error);
    request.desc = parsed.desc;
  } else {
    const auto parsed = attngen::parse_description(text);
    if (!parsed.error.empty()) throw std::runtime_error(o.description + ": " + parsed.error);
    request.desc = parsed.desc;
  }
  request.name = o.name;
  request.cpp_namespace = o.cpp_namespace;
  request.output_directory = o.output_dir;
  for (const auto& t : o.targets) request.targets.push_back(attngen::codegen::parse_target(t));
  const auto start = std::chrono::steady_clock::now();
  attngen::codegen::compile_kernel(request);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "attngen: generated %s for %zu target(s) in %.2f s\n", o.name.c_str(), o.targets.size(),
               seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const options o = parse(argc, argv);
    if (o.command == "generate") return generate(o);
    if (o.command == "runtime") {
      require(o.targets.size() == 1, "runtime needs exactly one --target");
      require(!o.output.empty(), "runtime needs --output");
      attngen::codegen::compile_runtime(attngen::codegen::parse_target(o.targets[0]), o.output);
      return 0;
    }
    if (o.command == "targets") {
      std::printf("%s\n", attngen::codegen::running_cpu_target().to_string().c_str());
      return 0;
    }
    if (o.command == "--help" || o.command == "-h" || o.command == "help") {
      std::fputs(usage, stdout);
      return 0;
    }
    throw std::invalid_argument("unknown command " + o.command);
  } catch (const std::invalid_argument& e) {
    if (*e.what()) std::fprintf(stderr, "attngen: %s\n", e.what());
    std::fputs(usage, stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attngen: error: %s\n", e.what());
    return 1;
  }
}
