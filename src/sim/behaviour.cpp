#include "loco/sim/behaviour.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/core/sum_of_squares.hpp"

namespace loco::sim {
namespace {

constexpr std::array kNames = {
    std::pair{Behaviour::honest, std::string_view("honest")},
    std::pair{Behaviour::scaled, std::string_view("scaled")},
    std::pair{Behaviour::sign_flipped, std::string_view("sign-flipped")},
    std::pair{Behaviour::random, std::string_view("random")},
    std::pair{Behaviour::stale, std::string_view("stale")},
    std::pair{Behaviour::zero_then_huge, std::string_view("zero-then-huge")},
    std::pair{Behaviour::accuser, std::string_view("accuser")},
    std::pair{Behaviour::wrong_mean, std::string_view("wrong-mean")},
    std::pair{Behaviour::relay_dropper, std::string_view("relay-dropper")},
    std::pair{Behaviour::one_segment, std::string_view("one-segment")},
    std::pair{Behaviour::disputer, std::string_view("disputer")},
    std::pair{Behaviour::silent, std::string_view("silent")},
};

float norm(std::span<const float> v) {
  return static_cast<float>(std::sqrt(sum_of_squares(v)));
}

std::vector<float> scaled(std::span<const float> v, float factor) {
  std::vector<float> out(v.begin(), v.end());
  for (float& x : out) x *= factor;
  return out;
}

}  // namespace

std::string_view name(Behaviour b) {
  for (const auto& [value, text] : kNames)
    if (value == b) return text;
  return "?";
}

Behaviour parse_behaviour(std::string_view text) {
  for (const auto& [value, name] : kNames)
    if (name == text) return value;
  throw Error(ErrorCategory::invalid_argument,
              fmt::format("unknown behaviour '{}': choose honest, scaled, sign-flipped, random, "
                          "stale, zero-then-huge, accuser, wrong-mean, relay-dropper, "
                          "one-segment, disputer or silent",
                          text));
}

Sent lie(Behaviour b, std::span<const float> update, std::span<const float> first,
         std::uint64_t seed) {
  const float honest_norm = norm(update);
  switch (b) {
    case Behaviour::honest:
    case Behaviour::accuser:
    case Behaviour::wrong_mean:
    case Behaviour::relay_dropper:
    case Behaviour::disputer:
    case Behaviour::silent: return {{update.begin(), update.end()}, honest_norm};
    case Behaviour::scaled: return {scaled(update, 1000.0f), honest_norm};
    case Behaviour::sign_flipped: return {scaled(update, -10.0f), honest_norm};
    case Behaviour::random: {
      Rng rng(seed);
      std::vector<float> noise(update.size());
      for (float& x : noise) x = rng.normal();
      const float n = norm(noise);
      const float factor = n > 0 ? 10.0f * honest_norm / n : 0.0f;
      for (float& x : noise) x *= factor;
      return {std::move(noise), honest_norm};
    }
    case Behaviour::stale: return {{first.begin(), first.end()}, norm(first)};
    case Behaviour::zero_then_huge: return {scaled(update, 1e6f), 0.0f};
    case Behaviour::one_segment: {
      std::vector<float> out(update.begin(), update.end());
      if (!out.empty()) out[0] = 1000.0f * std::max(honest_norm, 1.0f);
      return {std::move(out), honest_norm};
    }
  }
  return {{update.begin(), update.end()}, honest_norm};
}

}  // namespace loco::sim
