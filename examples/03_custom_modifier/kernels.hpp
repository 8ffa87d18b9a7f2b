#pragma once
// A custom attention, written by the user with attngen's modifier DSL: events with irregular
// timestamps (sensor logs, clinical records) attend to earlier events within a horizon, and older
// events weigh less. The timestamps and the decay rate are run-time inputs.
#include <attngen/attngen.hpp>

namespace example {

/// Per-event timestamps, (batch, events): a float tensor the kernel reads.
inline constexpr auto time = attngen::tensor<attngen::capture_type::f32>("time", attngen::dim::batch,
                                                                         attngen::dim::key_length);
/// The decay per unit of time, given at each call.
inline constexpr auto decay = attngen::scalar("decay");
/// How far back an event looks.
inline constexpr float horizon = 50.0f;

namespace detail {
using namespace attngen::mod;
inline constexpr auto elapsed = time(b, q) - time(b, kv);
}  // namespace detail

/// 8 heads sharing 2 kv heads, head_dim 64: earlier events within the horizon, biased by their age.
inline constexpr auto event_attention_description =
    attngen::attention()
        .heads(8)
        .kv_heads(2)
        .head_dim(64)
        .capture(time)
        .capture(decay)
        .mask_mod(detail::elapsed >= 0.0f && detail::elapsed <= horizon)
        .score_mod(attngen::mod::score - decay() * detail::elapsed);

}  // namespace example
