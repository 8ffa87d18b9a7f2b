// libFuzzer target: the generator's spec reader (attngen generate --spec / --describe) on any text.
// Properties: it returns or throws std::runtime_error naming the source, line and column; nothing
// else escapes and nothing crashes. Every description it returns is valid, and its text form reads
// back to a description with the same text form.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "attngen/module_text_format.hpp"
#include "attngen/module_validation.hpp"
#include "attngen/text_format.hpp"
#include "attngen/validation.hpp"
#include "spec.hpp"

namespace {

[[noreturn]] void violated(const char* property, const std::string& detail) {
  std::fprintf(stderr, "fuzz_spec: %s: %s\n", property, detail.c_str());
  std::abort();
}

template <typename Desc, typename Parse>
void check_round_trip(const Desc& desc, Parse parse) {
  if (!attngen::first_problem(desc).empty())
    violated("an invalid description was accepted", std::string(attngen::first_problem(desc)));
  const std::string text = attngen::to_text(desc);
  const auto again = parse(text);
  if (!again.error.empty()) violated("its text form does not read back", again.error + "\n" + text);
  // Unset knobs (kv_heads, v_head_dim) are written with their effective values: the text form is
  // canonical, so reading it back must give a description with the same text form.
  if (attngen::to_text(again.desc) != text)
    violated("its text form reads back to another description", text + "\n---\n" + attngen::to_text(again.desc));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& kernel : attngen::tool::parse_spec(text, "spec")) {
      if (const auto* op = std::get_if<attngen::attention_desc>(&kernel.desc))
        check_round_trip(*op, [](const std::string& t) { return attngen::parse_description(t); });
      else
        check_round_trip(std::get<attngen::mha_desc>(kernel.desc),
                         [](const std::string& t) { return attngen::parse_module_description(t); });
    }
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    if (message.rfind("spec", 0) != 0 || message.find(": ") == std::string::npos)
      violated("an error does not name its source", message);
  }
  return 0;
}
