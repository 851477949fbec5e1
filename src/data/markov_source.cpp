#include "loco/data/markov_source.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"

namespace loco::data {
namespace {

constexpr std::uint32_t kMaxStates = 1u << 22;
constexpr std::uint32_t kMaxWeight = 256;  // successor weights are drawn from 1..kMaxWeight
constexpr int kMaxPowerIterations = 10000;
constexpr double kStationaryTolerance = 1e-13;  // L1 change between power iterations

void check_config(const MarkovConfig& c) {
  auto fail = [](const std::string& what) {
    throw Error(ErrorCategory::invalid_argument, "Markov source: " + what);
  };
  if (c.vocab_size < 2 || c.vocab_size > 256) fail("vocab_size must be in 2..256");
  if (c.order < 1) fail("order must be at least 1");
  if (c.successors < 1 || c.successors > c.vocab_size) fail("successors must be in 1..vocab_size");
  if (!(c.uniform_mix > 0.0 && c.uniform_mix <= 1.0)) fail("uniform_mix must be in (0, 1]");
  std::uint64_t states = 1;
  for (std::uint32_t i = 0; i < c.order; ++i) {
    states *= c.vocab_size;
    if (states > kMaxStates) fail("vocab_size^order exceeds 2^22 states; lower the order");
  }
}

double plogp(double p) {
  return p > 0.0 ? p * std::log(p) : 0.0;
}

}  // namespace

MarkovSource::MarkovSource(const MarkovConfig& config) : config_(config) {
  check_config(config_);
  state_count_ = 1;
  for (std::uint32_t i = 0; i < config_.order; ++i) state_count_ *= config_.vocab_size;
  mix_threshold_ = static_cast<std::uint64_t>(std::llround(config_.uniform_mix * 0x1p32));
  if (mix_threshold_ == 0) {
    throw Error(ErrorCategory::invalid_argument, "Markov source: uniform_mix is below 2^-32");
  }
  draw_transitions();

  const std::vector<double> pi = stationary_distribution();
  double rate = 0.0;
  for (std::uint32_t s = 0; s < state_count_; ++s) rate += pi[s] * state_entropy(s);
  entropy_rate_ = rate;
}

void MarkovSource::draw_transitions() {
  const std::uint32_t k = config_.successors;
  successor_.resize(std::size_t{state_count_} * k);
  cumulative_.resize(successor_.size());
  Rng rng(config_.seed);
  for (std::uint32_t s = 0; s < state_count_; ++s) {
    std::uint16_t* tokens = &successor_[std::size_t{s} * k];
    std::uint32_t* sums = &cumulative_[std::size_t{s} * k];
    // Floyd's algorithm: k distinct tokens out of V with k draws.
    for (std::uint32_t j = config_.vocab_size - k, n = 0; j < config_.vocab_size; ++j, ++n) {
      const auto t = static_cast<std::uint16_t>(rng.below(j + 1));
      const bool taken = std::find(tokens, tokens + n, t) != tokens + n;
      tokens[n] = taken ? static_cast<std::uint16_t>(j) : t;
    }
    std::uint32_t total = 0;
    for (std::uint32_t j = 0; j < k; ++j) {
      total += 1 + static_cast<std::uint32_t>(rng.below(kMaxWeight));
      sums[j] = total;
    }
  }
}

double MarkovSource::probability(std::uint32_t state, std::uint16_t next) const {
  LOCO_ASSERT(state < state_count_ && next < config_.vocab_size, "Markov state or token range");
  const double mix = static_cast<double>(mix_threshold_) * 0x1p-32;
  const std::uint32_t k = config_.successors;
  const std::uint16_t* tokens = &successor_[std::size_t{state} * k];
  const std::uint32_t* sums = &cumulative_[std::size_t{state} * k];
  double p = mix / config_.vocab_size;
  for (std::uint32_t j = 0; j < k; ++j) {
    if (tokens[j] == next) {
      const std::uint32_t weight = sums[j] - (j == 0 ? 0 : sums[j - 1]);
      p += (1.0 - mix) * weight / sums[k - 1];
    }
  }
  return p;
}

double MarkovSource::state_entropy(std::uint32_t state) const {
  const double mix = static_cast<double>(mix_threshold_) * 0x1p-32;
  const std::uint32_t v = config_.vocab_size;
  const std::uint32_t k = config_.successors;
  double h = -static_cast<double>(v - k) * plogp(mix / v);
  for (std::uint32_t j = 0; j < k; ++j) {
    h -= plogp(probability(state, successor_[std::size_t{state} * k + j]));
  }
  return h;
}

std::vector<double> MarkovSource::stationary_distribution() const {
  const double mix = static_cast<double>(mix_threshold_) * 0x1p-32;
  const std::uint32_t v = config_.vocab_size;
  const std::uint32_t k = config_.successors;
  const std::uint32_t suffixes = state_count_ / v;  // V^(k-1): what a state keeps of its context
  std::vector<double> pi(state_count_, 1.0 / state_count_);
  std::vector<double> next(state_count_);
  std::vector<double> suffix_mass(suffixes);
  for (int iteration = 0; iteration < kMaxPowerIterations; ++iteration) {
    // The uniform part reaches s' = (suffix, x) from every state ending in `suffix`.
    std::fill(suffix_mass.begin(), suffix_mass.end(), 0.0);
    for (std::uint32_t s = 0; s < state_count_; ++s) suffix_mass[s % suffixes] += pi[s];
    for (std::uint32_t s = 0; s < state_count_; ++s) next[s] = mix / v * suffix_mass[s / v];
    for (std::uint32_t s = 0; s < state_count_; ++s) {
      const std::uint32_t* sums = &cumulative_[std::size_t{s} * k];
      const double scale = (1.0 - mix) * pi[s] / sums[k - 1];
      for (std::uint32_t j = 0; j < k; ++j) {
        const std::uint32_t weight = sums[j] - (j == 0 ? 0 : sums[j - 1]);
        next[next_state(s, successor_[std::size_t{s} * k + j])] += scale * weight;
      }
    }
    double change = 0.0;
    for (std::uint32_t s = 0; s < state_count_; ++s) change += std::abs(next[s] - pi[s]);
    pi.swap(next);
    if (change < kStationaryTolerance) return pi;
  }
  throw Error(ErrorCategory::invalid_argument,
              "Markov source: the stationary distribution did not converge; raise uniform_mix");
}

void MarkovSource::generate(std::span<std::uint16_t> out, std::uint64_t sequence_seed) const {
  const std::uint32_t k = config_.successors;
  Rng rng(sequence_seed);
  auto state = static_cast<std::uint32_t>(rng.below(state_count_));
  for (std::uint16_t& token : out) {
    if ((rng.next_u64() >> 32) < mix_threshold_) {
      token = static_cast<std::uint16_t>(rng.below(config_.vocab_size));
    } else {
      const std::uint32_t* sums = &cumulative_[std::size_t{state} * k];
      const auto r = static_cast<std::uint32_t>(rng.below(sums[k - 1]));
      const auto j = static_cast<std::size_t>(std::upper_bound(sums, sums + k, r) - sums);
      token = successor_[std::size_t{state} * k + j];
    }
    state = next_state(state, token);
  }
}

std::vector<std::uint16_t> MarkovSource::generate(std::size_t count,
                                                  std::uint64_t sequence_seed) const {
  std::vector<std::uint16_t> out(count);
  generate(out, sequence_seed);
  return out;
}

}  // namespace loco::data
