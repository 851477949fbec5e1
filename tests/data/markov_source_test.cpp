#include "loco/data/markov_source.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"

namespace loco::data {
namespace {

// Plug-in estimate of the entropy rate from transition counts, Σ n(s,x)/N · ln(n(s)/n(s,x)), with
// the Miller–Madow correction (observed cells − states)/(2N) for its downward bias. It uses
// nothing of the source but its output, so it checks π and the per-state entropies.
double empirical_entropy_rate(const MarkovSource& source, const std::vector<std::uint16_t>& seq) {
  const std::uint32_t v = source.config().vocab_size;
  std::vector<double> pair_counts(std::size_t{source.state_count()} * v, 0.0);
  std::vector<double> state_counts(source.state_count(), 0.0);
  std::uint32_t state = 0;
  // Skip the first `order` tokens: until then the state is not read from the sequence.
  for (std::size_t i = 0; i < seq.size(); ++i) {
    if (i >= source.config().order) {
      pair_counts[std::size_t{state} * v + seq[i]] += 1;
      state_counts[state] += 1;
    }
    state = source.next_state(state, seq[i]);
  }
  const double total = static_cast<double>(seq.size() - source.config().order);
  double h = 0.0;
  double observed_cells = 0.0;
  for (std::size_t cell = 0; cell < pair_counts.size(); ++cell) {
    const double n = pair_counts[cell];
    if (n > 0) {
      h += n / total * std::log(state_counts[cell / v] / n);
      observed_cells += 1;
    }
  }
  return h + (observed_cells - source.state_count()) / (2 * total);
}

TEST(MarkovSource, UniformSourceHasEntropyLnV) {
  const MarkovSource source({.vocab_size = 64, .order = 2, .successors = 3, .uniform_mix = 1.0});
  EXPECT_NEAR(source.entropy_rate(), std::log(64.0), 1e-12);
}

TEST(MarkovSource, SingleSuccessorMatchesClosedForm) {
  // Every state has the same next-token distribution: one token with 1 − m + m/V, the others
  // m/V each. The entropy rate is that distribution's entropy whatever π is.
  const double m = 0.125;  // a multiple of 2^-32, so no rounding
  const double v = 32;
  const MarkovSource source({.vocab_size = 32, .order = 1, .successors = 1, .uniform_mix = m});
  const double big = 1 - m + m / v;
  const double expected = -(v - 1) * (m / v) * std::log(m / v) - big * std::log(big);
  EXPECT_NEAR(source.entropy_rate(), expected, 1e-12);
}

TEST(MarkovSource, NextTokenProbabilitiesSumToOne) {
  const MarkovSource source({.vocab_size = 16, .order = 2, .successors = 4, .uniform_mix = 0.03});
  for (std::uint32_t s = 0; s < source.state_count(); ++s) {
    double sum = 0.0;
    for (std::uint16_t x = 0; x < 16; ++x) sum += source.probability(s, x);
    ASSERT_NEAR(sum, 1.0, 1e-12) << "state " << s;
  }
}

// The exact rate against two estimates on 1M generated tokens. The per-token loss has a standard
// deviation around 1 nat, so the mean's standard error is ~0.001 (a few times that with the
// chain's correlation). The corrected plug-in estimate is checked only where every (state, next)
// cell is expected to be seen ≥ 100 times over; with sparser counts its bias nears 0.01.
class MarkovEntropyVsEmpirical : public ::testing::TestWithParam<MarkovConfig> {};

TEST_P(MarkovEntropyVsEmpirical, AgreeWithinStatisticalError) {
  const MarkovSource source(GetParam());
  const auto seq = source.generate(1'000'000, 99);
  double loss = 0.0;
  std::uint32_t state = 0;
  std::size_t scored = 0;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    if (i >= source.config().order) {
      loss -= std::log(source.probability(state, seq[i]));
      ++scored;
    }
    state = source.next_state(state, seq[i]);
  }
  EXPECT_NEAR(loss / static_cast<double>(scored), source.entropy_rate(), 0.01);
  const std::size_t cells = std::size_t{source.state_count()} * source.config().vocab_size;
  if (cells * 100 <= seq.size()) {
    EXPECT_NEAR(empirical_entropy_rate(source, seq), source.entropy_rate(), 0.01);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, MarkovEntropyVsEmpirical,
    ::testing::Values(
        MarkovConfig{.vocab_size = 32, .order = 1, .successors = 3, .uniform_mix = 0.05, .seed = 1},
        MarkovConfig{.vocab_size = 16, .order = 2, .successors = 2, .uniform_mix = 0.02, .seed = 2},
        MarkovConfig{
            .vocab_size = 256, .order = 1, .successors = 4, .uniform_mix = 0.02, .seed = 3}),
    [](const ::testing::TestParamInfo<MarkovConfig>& param_info) {
      std::string name = "V";
      name += std::to_string(param_info.param.vocab_size);
      name += "_order";
      name += std::to_string(param_info.param.order);
      return name;
    });

TEST(MarkovSource, GenerationIsDeterministic) {
  const MarkovConfig config{.vocab_size = 64, .order = 1, .successors = 4, .seed = 5};
  const auto a = MarkovSource(config).generate(10'000, 7);
  EXPECT_EQ(a, MarkovSource(config).generate(10'000, 7));
  EXPECT_NE(a, MarkovSource(config).generate(10'000, 8));  // another sequence seed
  MarkovConfig other = config;
  other.seed = 6;
  EXPECT_NE(a, MarkovSource(other).generate(10'000, 7));  // another transition table
  // Pinned bits: the corpus must be the same on every machine and in every build.
  EXPECT_EQ(to_hex(blake2b(std::as_bytes(std::span(a)))),
            "874cc900cd85694a9b62bcdeb97009eae3f4712981380b0a021d690b6e308c28");
}

TEST(MarkovSource, GeneratedTokensStayInVocabulary) {
  const MarkovSource source({.vocab_size = 10, .order = 3, .successors = 10, .uniform_mix = 0.5});
  for (std::uint16_t t : source.generate(50'000, 1)) ASSERT_LT(t, 10);
}

TEST(MarkovSource, RejectsBadConfigs) {
  EXPECT_THROW(MarkovSource({.vocab_size = 1}), Error);
  EXPECT_THROW(MarkovSource({.vocab_size = 257}), Error);
  EXPECT_THROW(MarkovSource({.order = 0}), Error);
  EXPECT_THROW(MarkovSource({.vocab_size = 256, .order = 3}), Error);  // 2^24 states
  EXPECT_THROW(MarkovSource({.vocab_size = 8, .successors = 9}), Error);
  EXPECT_THROW(MarkovSource({.successors = 0}), Error);
  EXPECT_THROW(MarkovSource({.uniform_mix = 0.0}), Error);
  EXPECT_THROW(MarkovSource({.uniform_mix = 1.5}), Error);
}

}  // namespace
}  // namespace loco::data
