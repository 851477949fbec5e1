#pragma once
// A synthetic corpus whose best achievable loss is known exactly: a seeded random Markov source
// of order k over the tokens 0..V-1.
//
// Each context (the last k tokens, a "state") has `successors` likely next tokens with integer
// weights drawn from the seed. With probability m = uniform_mix the next token is instead drawn
// uniformly from all V tokens, which makes every transition possible (the chain is irreducible
// and aperiodic, so it has one stationary distribution π). The next-token distribution of state s
// is therefore p_s(x) = m/V + (1 − m)·w_s(x)/W_s, and the entropy rate is
//     H = Σ_s π(s) · H(p_s)          (nats per token),
// the cross-entropy a perfect model reaches. π is computed by power iteration in double.
//
// Everything is a pure function of the config (loco::Rng, no std:: distributions); m is rounded
// to a multiple of 2^-32 and sampling uses integer thresholds, so the probabilities used for the
// entropy are exactly the ones generation draws from.

#include <cstdint>
#include <span>
#include <vector>

namespace loco::data {

struct MarkovConfig {
  std::uint32_t vocab_size = 256;  // V: tokens 0..V-1, 2 ≤ V ≤ 256 (a byte vocabulary)
  std::uint32_t order = 1;         // k: tokens of context; V^k ≤ 2^22 states
  std::uint32_t successors = 4;    // likely next tokens per state, 1 ≤ successors ≤ V
  double uniform_mix = 0.02;       // m in (0, 1]: probability of a uniform draw
  std::uint64_t seed = 1;          // draws the transition table
};

class MarkovSource {
 public:
  // Throws Error(invalid_argument) for a config outside the ranges above.
  explicit MarkovSource(const MarkovConfig& config);

  const MarkovConfig& config() const { return config_; }
  std::uint32_t state_count() const { return state_count_; }

  // The exact entropy rate in nats per token: the lowest achievable mean cross-entropy loss.
  double entropy_rate() const { return entropy_rate_; }

  // P(next | state) as used by generation. A state is the context read as a base-V number,
  // oldest token first.
  double probability(std::uint32_t state, std::uint16_t next) const;
  std::uint32_t next_state(std::uint32_t state, std::uint16_t token) const {
    return static_cast<std::uint32_t>((state * std::uint64_t{config_.vocab_size} + token) %
                                      state_count_);
  }

  // Fills `out` with a sequence that starts in a state drawn uniformly from `sequence_seed`.
  // Same config and seed → same tokens, on every machine.
  void generate(std::span<std::uint16_t> out, std::uint64_t sequence_seed) const;
  std::vector<std::uint16_t> generate(std::size_t count, std::uint64_t sequence_seed) const;

 private:
  void draw_transitions();
  std::vector<double> stationary_distribution() const;
  double state_entropy(std::uint32_t state) const;

  MarkovConfig config_;
  std::uint32_t state_count_ = 0;
  std::uint64_t mix_threshold_ = 0;        // uniform draw when (u64 >> 32) < threshold
  std::vector<std::uint16_t> successor_;   // [state × successors]: distinct tokens
  std::vector<std::uint32_t> cumulative_;  // [state × successors]: running weight sums
  double entropy_rate_ = 0.0;
};

}  // namespace loco::data
