// The modifier DSL: expressions build the graphs the generator lowers, the text form carries them
// exactly, and the description rules catch what the C++ types cannot.
#include <catch2/catch.hpp>

#include "attngen/attngen.hpp"

using namespace attngen;
using namespace attngen::mod;

namespace {
constexpr auto document = tensor<capture_type::i32>("document", dim::batch, dim::key_length);
constexpr auto table = tensor<capture_type::f32>("table", dim::heads, dim::fixed(9));
constexpr auto cap = scalar("cap");
constexpr auto base = attention().heads(4).kv_heads(2).head_dim(32);
}  // namespace

TEST_CASE("modifier expressions build post-order graphs whose root is the last node", "[dsl][modifiers]") {
  constexpr auto e = kv <= q + 3;
  STATIC_REQUIRE(e.graph.count == 5);
  STATIC_REQUIRE(e.graph.root().op == expr_op::le);
  STATIC_REQUIRE(e.graph.root().kind == value_kind::boolean);
  STATIC_REQUIRE(e.graph.nodes[e.graph.root().operands[1]].op == expr_op::add);
}

TEST_CASE("an integer mixed with a float is converted to float by a to_float node", "[dsl][modifiers]") {
  constexpr auto e = kv + 0.5f;
  STATIC_REQUIRE(decltype(e)::kind == value_kind::floating);
  STATIC_REQUIRE(e.graph.nodes[e.graph.root().operands[0]].op == expr_op::to_float);
}

TEST_CASE("tensor reads take their kind from the tensor's type", "[dsl][modifiers]") {
  STATIC_REQUIRE(decltype(document(b, q))::kind == value_kind::integer);
  STATIC_REQUIRE(decltype(table(h, kv))::kind == value_kind::floating);
}

TEST_CASE("text form round-trips modifiers and captures exactly", "[dsl][modifiers][text]") {
  const auto desc = base.capture(document)
                        .capture(table)
                        .capture(cap)
                        .mask_mod(document_mask(document) && sliding_window(64, 3) && !(kv / 7 == -2))
                        .score_mod(softcap(cap) + relative_position_bias(table, 4) + alibi(4) * 0.0f);
  const auto parsed = parse_description(to_text(desc));
  INFO(to_text(desc));
  REQUIRE(parsed.error.empty());
  CHECK(parsed.desc.captures == desc.captures);
  CHECK(parsed.desc.score_modifier == desc.score_modifier);
  CHECK(parsed.desc.mask_modifier == desc.mask_modifier);
}

TEST_CASE("text form of a modifier reads as prefix calls", "[dsl][modifiers][text]") {
  CHECK(to_text((kv <= q + (kv_len - q_len)).graph) == "le(kv, add(q, sub(kv_len, q_len)))");
  CHECK(to_text((cap() * tanh(score / cap())).graph) == "mul($cap, tanh(div(score, $cap)))");
  CHECK(to_text((document(b, q) == 3).graph) == "eq(@document(b, q), 3)");
}

TEST_CASE("text form names the line and the column of a malformed modifier", "[dsl][modifiers][text]") {
  const auto parsed = parse_description("heads = 4\nhead_dim = 32\nmask_mod = and(le(kv, q), nonsense)\n");
  CHECK(parsed.error == "line 3, column 35: mask_mod: unknown name `nonsense`");
}

TEST_CASE("text form rejects a modifier of the wrong kind", "[dsl][modifiers][text]") {
  CHECK(parse_description("heads = 4\nhead_dim = 32\nscore_mod = le(kv, q)\n").error ==
        "line 3, column 13: score_mod must be a number expression");
  CHECK(parse_description("heads = 4\nhead_dim = 32\nmask_mod = add(kv, 1.5f)\n").error ==
        "line 3, column 25: mask_mod: operands must be two integers or two floats");
}

TEST_CASE("text form rejects a read of a tensor declared nowhere", "[dsl][modifiers][text]") {
  CHECK(parse_description("heads = 4\nhead_dim = 32\nmask_mod = eq(@doc(b, q), 1)\n").error ==
        "line 3, column 19: mask_mod: tensor `doc` is not declared (a `tensor =` line before it)");
}

TEST_CASE("text form rejects a tensor with more than three extents", "[dsl][modifiers][text]") {
  CHECK(parse_description("heads = 4\nhead_dim = 32\ntensor = doc i32 batch 2 3 4\n").error ==
        "line 3, column 10: a tensor has at most 3 extents");
}

TEST_CASE("a tensor read with the wrong number of indices breaks a description rule", "[dsl][modifiers]") {
  constexpr auto desc = base.capture(document).mask_mod(document(b) == 0);
  CHECK(first_problem(desc) ==
        "a captured tensor is read with a different number of indices than its declared dimensions");
}

TEST_CASE("an integer constant beyond 2^24 breaks a description rule", "[dsl][modifiers]") {
  constexpr auto desc = base.mask_mod(kv <= q + 16777217);
  CHECK(first_problem(desc) == "an integer constant in a modifier must lie within -2^24 to 2^24 (16777216)");
  CHECK(first_problem(base.mask_mod(kv <= q - 16777216)).empty());
}

TEST_CASE("text form refuses an integer constant too large for any integer type", "[dsl][modifiers][text]") {
  const auto parsed =
      parse_description("heads = 4\nhead_dim = 32\nmask_mod = le(kv, add(q, 99999999999999999999999999))\n");
  CHECK_THAT(parsed.error, Catch::Matchers::EndsWith("an integer constant in a modifier must lie within -2^24 to 2^24 (16777216)"));
}

TEST_CASE("captures need distinct identifier names", "[dsl][modifiers]") {
  constexpr auto twice = base.capture(document).capture(tensor<capture_type::f32>("document", dim::batch));
  CHECK(first_problem(twice) == "captured tensors and scalars need distinct names: identifiers of at most 15 characters");
  constexpr auto long_name = base.capture(scalar("a_name_far_too_long"));
  CHECK(first_problem(long_name) ==
        "captured tensors and scalars need distinct names: identifiers of at most 15 characters");
}

TEST_CASE("at most four scalars can be captured", "[dsl][modifiers]") {
  constexpr auto desc = base.capture(scalar("a")).capture(scalar("b")).capture(scalar("c")).capture(scalar("d")).capture(
      scalar("e"));
  CHECK(first_problem(desc) == "at most 4 tensors and 4 scalars can be captured");
}

TEST_CASE("a modifier larger than 40 nodes breaks a description rule", "[dsl][modifiers]") {
  constexpr auto e = kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv + kv +
                     kv + kv + kv;
  constexpr auto desc = base.mask_mod(e > q);
  CHECK(first_problem(desc) == "a modifier expression has more than 40 nodes");
}

TEST_CASE("a capture named like a parameter of the typed call or a C++ keyword is refused", "[dsl][modifiers]") {
  constexpr std::string_view message =
      "a captured tensor or scalar cannot be named q, k, v, mask, key_padding, output, lse, q_offsets, k_scale, "
      "v_scale, page_table, kv_lengths, positions, sinks, gpu, tensors, scalars, description or a C++ keyword: the generated "
      "typed call has parameters of those names";
  CHECK(first_problem(base.capture(tensor<capture_type::f32>("output", dim::heads))) == message);
  CHECK(first_problem(base.capture(scalar("gpu"))) == message);
  CHECK(first_problem(base.capture(scalar("page_table"))) == message);
  CHECK(first_problem(base.capture(scalar("tensors"))) == message);
  CHECK(first_problem(base.capture(scalar("float"))) == message);
  CHECK(first_problem(base.capture(scalar("outputs"))).empty());
}

TEST_CASE("float math converts an integer operand to float", "[dsl][modifiers][math]") {
  constexpr auto e = sin(kv);
  STATIC_REQUIRE(decltype(e)::kind == value_kind::floating);
  STATIC_REQUIRE(e.graph.root().op == expr_op::sin);
  STATIC_REQUIRE(e.graph.nodes[e.graph.root().operands[0]].op == expr_op::to_float);
  STATIC_REQUIRE(decltype(pow(2, h))::kind == value_kind::floating);
}

TEST_CASE("remainder of integers is an integer, of a float and an integer a float", "[dsl][modifiers][math]") {
  STATIC_REQUIRE(decltype(kv % 3)::kind == value_kind::integer);
  STATIC_REQUIRE(decltype(score % 3)::kind == value_kind::floating);
  STATIC_REQUIRE((kv % 3).graph.root().op == expr_op::modulo);
}

TEST_CASE("bit operations on integers give integers", "[dsl][modifiers][math]") {
  STATIC_REQUIRE((kv & 3).graph.root().op == expr_op::bit_and);
  STATIC_REQUIRE((kv | q).graph.root().op == expr_op::bit_or);
  STATIC_REQUIRE((kv ^ q).graph.root().op == expr_op::bit_xor);
  STATIC_REQUIRE((~kv).graph.root().op == expr_op::bit_not);
  STATIC_REQUIRE((1 << kv).graph.root().op == expr_op::shift_left);
  STATIC_REQUIRE(decltype(q >> 2)::kind == value_kind::integer);
}

TEST_CASE("& and | on two conditions are && and ||", "[dsl][modifiers][math]") {
  STATIC_REQUIRE(((kv <= q) & (q < 5)).graph == ((kv <= q) && (q < 5)).graph);
  STATIC_REQUIRE(((kv <= q) | (q < 5)).graph == ((kv <= q) || (q < 5)).graph);
}

TEST_CASE("infinity is a float constant and -infinity its negation", "[dsl][modifiers][math]") {
  STATIC_REQUIRE(infinity.graph.root().op == expr_op::constant);
  STATIC_REQUIRE(infinity.graph.root().number == std::numeric_limits<float>::infinity());
  STATIC_REQUIRE((-infinity).graph.root().op == expr_op::neg);
}

TEST_CASE("text form round-trips every math node and infinite constants", "[dsl][modifiers][math][text]") {
  const modifier_graph graphs[] = {
      ((kv - q) % 4 == 3 || ((((q >> 2) ^ (kv << 1)) & ~h) | 1) == 1).graph,
      (select(kv % 5 == 4, -infinity, detail::as_expr(-std::numeric_limits<float>::infinity()) * 0.0f + score) +
       score % 0.5f)
          .graph,
      (sin(score) + cos(score) + tan(score) + asin(score) + acos(score) + atan(score) + sinh(score) + cosh(score))
          .graph,
      (exp2(score) + sqrt(score) + floor(score) + ceil(score) + round(score) + sigmoid(score) + erf(score) +
       pow(score, 2) + atan2(score, 1.5f))
          .graph,
  };
  for (const modifier_graph& graph : graphs) {
    INFO(to_text(graph));
    modifier_graph parsed;
    std::size_t error_at = 0;
    REQUIRE(parse_modifier(to_text(graph), capture_table{}, parsed, &error_at).empty());
    CHECK(parsed == graph);
  }
  CHECK(to_text((-infinity).graph) == "neg(inff)");
}

TEST_CASE("text form refuses a float in a bit operation and a boolean in float math", "[dsl][modifiers][math][text]") {
  CHECK(parse_description("heads = 4\nhead_dim = 32\nmask_mod = eq(bit_and(kv, 1.5f), 0)\n").error ==
        "line 3, column 32: mask_mod: operands must be integers");
  CHECK(parse_description("heads = 4\nhead_dim = 32\nscore_mod = sin(le(kv, q))\n").error ==
        "line 3, column 27: score_mod: operand must be a float");
  CHECK(parse_description("heads = 4\nhead_dim = 32\nscore_mod = pow(score)\n").error ==
        "line 3, column 23: score_mod: pow takes 2 operands");
}

TEST_CASE("with a backward pass a capture named like a gradient (dq, dk, dv, d_...) is refused",
          "[dsl][modifiers][backward]") {
  constexpr auto table_capture = tensor<capture_type::f32>("table", dim::heads);
  constexpr auto d_table_capture = tensor<capture_type::i32>("d_table", dim::heads);
  constexpr auto desc = base.capture(table_capture).capture(d_table_capture).score_mod(score + table_capture(h)).return_lse();
  CHECK(first_problem(desc).empty());
  constexpr std::string_view message =
      "with .with_backward(), a captured tensor or scalar cannot be named dq, dk, dv or d_...: the backward's typed "
      "call names the gradients so (d_output, d_<capture>, d_scalars)";
  CHECK(first_problem(desc.with_backward()) == message);
  CHECK(first_problem(base.capture(scalar("dk")).return_lse().with_backward()) == message);
  CHECK(first_problem(base.capture(scalar("dk")).return_lse()).empty());
}
