#include "support/configuration_tests.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <utility>

namespace attngen::testing {

namespace {

class function_invoker final : public Catch::ITestInvoker {
 public:
  explicit function_invoker(std::function<void()> body) : body_(std::move(body)) {}
  void invoke() const override { body_(); }

 private:
  std::function<void()> body_;
};

template <typename Values>
std::string listed(const Values& values, const char* last_separator) {
  std::ostringstream text;
  for (int n = 0; n < values.size(); ++n)
    text << (n == 0 ? "" : n + 1 == values.size() ? last_separator : ", ") << values.items[n];
  return text.str();
}

}  // namespace

void register_test_case(const std::string& name, const std::string& tags, std::function<void()> body,
                        std::source_location where) {
  // Catch copies the name and tags; the invoker is its own from here on.
  Catch::AutoReg(new function_invoker(std::move(body)), Catch::SourceLineInfo(where.file_name(), where.line()),
                 Catch::StringRef(), Catch::NameAndTags(name, tags));
}

std::string title(const operator_configuration& c) {
  return std::string(c.name) + " (" + std::string(c.about) + ")";
}

std::string title(const module_configuration& c) {
  return std::string(c.name) + " (" + std::string(c.about) + ")";
}

std::string sizes_text(const length_matrix& m) {
  std::string text = "Lq, Lk in {" + listed(m.lengths, ", ") + "}, batch " + listed(m.batches, " and ");
  if (!m.target.empty()) text += ", target " + std::string(m.target);
  if (!m.finer_target.empty()) text += " with " + std::string(m.finer_target) + "'s finer tiles";
  if (m.bf16_dot_products) text += ", bf16 dot products";
  return text;
}

std::string sizes_text(const shape* first, const shape* last) {
  std::ostringstream text;
  text << "(B, Lq, Lk)";
  for (const shape* s = first; s != last; ++s)
    text << (s == first ? " " : ", ") << "(" << s->batch << ", " << s->query_length << ", " << s->key_length << ")";
  return text.str();
}

bool has_calls(std::string_view name, backend b) {
  const bool gpu = b == backend::cuda || b == backend::opencl;
  if (const operator_configuration* c = operator_configuration_named(name))
    return b == backend::aot ? !c->aot.empty() || !c->aot_batches.empty()
                             : gpu && (!c->gpu.empty() || !c->gpu_batches.empty()) && cannot_run(b, c->desc).empty();
  if (const module_configuration* c = module_configuration_named(name))
    return b == backend::aot ? !c->aot.empty() : gpu && !c->gpu.empty() && cannot_run(b, c->desc).empty();
  return false;
}

std::string description_text_of(std::string_view name) {
  if (const operator_configuration* c = operator_configuration_named(name)) return to_text(c->desc);
  if (const module_configuration* c = module_configuration_named(name)) return to_text(c->desc);
  return "";
}

std::vector<shape> calls_with(const short_list<gpu_call, 4>& calls, placement where) {
  std::vector<shape> sizes;
  for (const gpu_call& call : calls)
    if (call.where == where) sizes.push_back(call.sizes);
  return sizes;
}

std::string placement_text(placement where) {
  return where == placement::device_tensors ? "on device tensors" : "with host tensors copied in and out";
}

}  // namespace attngen::testing
