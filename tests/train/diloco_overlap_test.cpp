// DiLoCo's overlapped round (train/overlapped_group.hpp), against a scripted group: the inner
// phase after a round starts from the state the group then commits, bit for bit the blocking
// round's; a retry after the mean installs the retry's mean; a skip installs nothing; finish()
// lands the last round.

#include <gtest/gtest.h>

#include <optional>
#include <utility>

#include "../support/tiny_train_config.hpp"
#include "loco/compress/codec.hpp"
#include "loco/train/diloco.hpp"

namespace loco::train {
namespace {

TrainConfig overlap_run() {
  TrainConfig c = test::tiny_train_config(0, 1, /*n_layer=*/1, /*batch=*/8);
  c.strategy.kind = "diloco";
  return c;
}

// A group of one whose mean is the member's own Δ (times `scale`), and whose landing follows a
// script: committed with the mean times `landed_scale` (a retry's other mean), or skipped. With
// `codec`, the mean is those values encoded in chunks, as the direct exchange keeps it, or, with
// `decode_first`, an fp32 mean of what those chunks decode to.
class ScriptedOverlap final : public OuterGroup, public OverlappedGroup {
 public:
  RoundResult run_round(const RoundInput& input) override {  // the blocking form, for reference
    manifests.push_back(input.tentative(input.delta));
    input.install();
    return RoundResult{.kind = RoundResult::Kind::committed, .members = 1};
  }
  void start(std::uint64_t, std::span<const float> delta, float, const PhaseClaim& claim,
             std::function<proto::StateManifest(const proto::RoundMean&)> manifest) override {
    token_claims.push_back(claim.tokens);
    step_claims.push_back(claim.step_seconds);
    delta_.assign(delta.begin(), delta.end());  // lent until mean() returns
    manifest_ = std::move(manifest);
  }
  std::shared_ptr<const proto::RoundMean> mean() override { return as_mean(delta_); }
  void previewed() override {
    ++previews;
    if (on_previewed) on_previewed();
  }
  bool outcome_in() const override { return outcome_early; }
  std::optional<RoundResult> take_replaced() override {
    ++replaced_asks;
    if (!waiting) return std::nullopt;
    shared->set_round(*std::exchange(waiting, std::nullopt));
    return RoundResult{.kind = RoundResult::Kind::replaced, .phase = phase, .told = told};
  }
  RoundResult land(const std::function<void(const proto::RoundMean&)>& install) override {
    ++landings;
    if (skip) return RoundResult{.kind = RoundResult::Kind::skipped};
    if (replace_with) {  // the run's state fetched into the shared state instead
      shared->set_round(*std::exchange(replace_with, std::nullopt));
      return RoundResult{.kind = RoundResult::Kind::replaced, .phase = phase, .told = told};
    }
    std::vector<float> landed = delta_;
    for (float& x : landed) x *= landed_scale;
    const std::shared_ptr<const proto::RoundMean> mean = as_mean(std::move(landed));
    manifests.push_back(manifest_(*mean));
    install(*mean);
    return RoundResult{.kind = RoundResult::Kind::committed, .members = 1, .phase = phase};
  }
  std::shared_ptr<const proto::RoundMean> as_mean(std::vector<float> values) const {
    if (!codec)
      return std::make_shared<const proto::RoundMean>(
          std::make_shared<const std::vector<float>>(std::move(values)));
    std::vector<std::vector<std::byte>> chunks;
    for (std::size_t at = 0; at < values.size(); at += kChunk)
      chunks.push_back(codec->encode(
          std::span<const float>(values).subspan(at, std::min(kChunk, values.size() - at))));
    auto encoded =
        std::make_shared<const proto::RoundMean>(std::move(chunks), values.size(), kChunk, codec);
    if (!decode_first) return encoded;
    return std::make_shared<const proto::RoundMean>(
        std::make_shared<const std::vector<float>>(encoded->values()));
  }

  std::vector<proto::StateManifest> manifests;
  std::vector<std::uint64_t> token_claims;  // each round's, as start() was told
  std::vector<float> step_claims;           // each round's seconds a step, as start() was told
  Duration phase{};                         // the tracker's next phase, with each commit
  bool outcome_early = false;               // the commit is in as soon as the next phase starts
  float landed_scale = 1.0f;
  bool skip = false;
  std::optional<std::uint64_t> replace_with;  // the next landing: replaced by this round's state
  TimePoint told{};                           // with it: when the member was told to fetch
  std::optional<std::uint64_t> waiting;       // fetched between rounds: take_replaced() gives it
  int replaced_asks = 0;
  SharedState* shared = nullptr;  // the strategy's, where a fetch puts the state
  int landings = 0;
  int previews = 0;
  std::function<void()> on_previewed;  // as the group is told previewed()
  std::shared_ptr<const compress::Codec> codec;
  bool decode_first = false;
  // Not a divisor of the state's chunks: a hashed chunk of θ' decodes parts of the mean's chunks.
  static constexpr std::size_t kChunk = 1000;

 private:
  std::vector<float> delta_;
  std::function<proto::StateManifest(const proto::RoundMean&)> manifest_;
};

struct Trainer {
  // With `round_time`, rounds are bounded by time on the test's clock, which each step advances by
  // step_time.
  explicit Trainer(bool overlapped, Duration round_time = {}, bool paced = false)
      : config(overlap_run()),
        corpus(config.data, 16),
        loop(config, corpus),
        diloco({.inner_steps = 4,
                .outer = config.strategy.outer,
                .round_time = round_time,
                .paced = paced,
                .clock = [this] { return now; }},
               loop.layout(), group, overlapped ? &group : nullptr) {
    diloco.begin(loop, Start::fresh);
    group.shared = &diloco.shared();
  }
  void steps(int n) {
    for (int i = 0; i < n; ++i) {
      loop.forward_backward();
      loop.optimizer_step();
      now += step_time;
      diloco.after_step(loop);
    }
  }
  TimePoint now{};
  Duration step_time{};
  TrainConfig config;
  Corpus corpus;
  InnerLoop loop;
  ScriptedOverlap group;
  DiLoCo diloco;
};

TEST(DiLoCoOverlap, EachPhaseStartsFromTheStateTheBlockingRoundWouldInstall) {
  Trainer blocking(false), overlapped(true);
  for (int round = 1; round <= 3; ++round) {
    blocking.steps(4);
    overlapped.steps(4);
    EXPECT_TRUE(std::equal(overlapped.loop.params().data().begin(),
                           overlapped.loop.params().data().end(),
                           blocking.loop.params().data().begin()))
        << "round " << round;
    // Rounds land one round late: the shared state is the round before's until then.
    EXPECT_EQ(overlapped.diloco.shared().round(), static_cast<std::uint64_t>(round - 1));
  }
  overlapped.diloco.finish(overlapped.loop);
  EXPECT_EQ(overlapped.diloco.shared().round(), 3u);
  EXPECT_EQ(overlapped.diloco.shared().manifest(), blocking.diloco.shared().manifest());
  EXPECT_EQ(overlapped.group.manifests, blocking.group.manifests);
}

// The group is told previewed() once a round, when the local copy already holds the state the
// next phase starts from: only then may it take the cores to hash that state.
TEST(DiLoCoOverlap, TheGroupIsToldPreviewedOnceTheNextPhasesStartIsInPlace) {
  Trainer blocking(false), overlapped(true);
  std::vector<float> at_previewed;
  overlapped.group.on_previewed = [&] {
    const std::span<const float> params = overlapped.loop.params().data();
    at_previewed.assign(params.begin(), params.end());
  };
  for (int round = 1; round <= 2; ++round) {
    blocking.steps(4);
    overlapped.steps(4);
    EXPECT_EQ(overlapped.group.previews, round);
    const std::span<const float> expected = blocking.loop.params().data();
    EXPECT_TRUE(
        std::equal(at_previewed.begin(), at_previewed.end(), expected.begin(), expected.end()))
        << "round " << round;
  }
}

// The mean kept encoded (the direct exchange's, read chunk by chunk) leads to the same bits as an
// fp32 mean holding what its chunks decode to: preview, tentative and install alike.
TEST(DiLoCoOverlap, AnEncodedMeanGivesTheStateItsFp32DecodeGives) {
  Trainer encoded(true), decoded(true);
  const std::shared_ptr<const compress::Codec> codec = compress::make_codec("int8:block=256");
  encoded.group.codec = decoded.group.codec = codec;
  decoded.group.decode_first = true;
  for (int round = 1; round <= 3; ++round) {
    encoded.steps(4);
    decoded.steps(4);
    EXPECT_TRUE(std::equal(encoded.loop.params().data().begin(), encoded.loop.params().data().end(),
                           decoded.loop.params().data().begin()))
        << "round " << round << ": the previewed θ'";
  }
  encoded.diloco.finish(encoded.loop);
  decoded.diloco.finish(decoded.loop);
  EXPECT_EQ(encoded.diloco.shared().round(), 3u);
  EXPECT_EQ(encoded.diloco.shared().manifest(), decoded.diloco.shared().manifest());
  EXPECT_EQ(encoded.group.manifests, decoded.group.manifests);
  EXPECT_EQ(encoded.group.manifests.back(), encoded.diloco.shared().manifest())
      << "what is installed is what was hashed";
}

TEST(DiLoCoOverlap, ARetryAfterTheMeanInstallsTheRetrysMean) {
  Trainer t(true);
  t.steps(4);  // round 1 started, its mean in: the local copy is θ'(Δ)
  const std::vector<float> previewed(t.loop.params().data().begin(), t.loop.params().data().end());
  t.group.landed_scale = 0.5f;  // the group committed another attempt's mean
  t.diloco.finish(t.loop);
  EXPECT_EQ(t.diloco.shared().round(), 1u);
  EXPECT_EQ(t.group.manifests.back(), t.diloco.shared().manifest())
      << "what is installed is what the group hashed for the committed attempt";
  EXPECT_NE(t.diloco.shared().arena(0).data()[0], previewed[0]);
  EXPECT_TRUE(std::equal(previewed.begin(), previewed.end(), t.loop.params().data().begin()))
      << "the local copy keeps its steps";
}

TEST(DiLoCoOverlap, ASkippedRoundInstallsNothingAndTheNextRoundLandsIt) {
  Trainer t(true);
  const proto::StateManifest genesis = t.diloco.shared().manifest();
  t.group.skip = true;
  t.steps(8);  // round 1 skipped when round 2 starts
  EXPECT_EQ(t.group.landings, 1);
  EXPECT_EQ(t.diloco.shared().round(), 0u);
  EXPECT_EQ(t.diloco.shared().manifest(), genesis);
  t.group.skip = false;
  t.diloco.finish(t.loop);
  EXPECT_EQ(t.diloco.shared().round(), 1u);
  t.diloco.finish(t.loop);  // nothing in flight: nothing to land
  EXPECT_EQ(t.group.landings, 2);
}

// Rounds bounded by time: a phase ends at the first step that ends the round's time or more after
// it began, whatever H says, and the round claims the tokens of the steps it took.
TEST(DiLoCoOverlap, ARoundBoundedByTimeEndsAtItsDeadlineAndClaimsItsSteps) {
  using namespace std::chrono_literals;
  Trainer t(true, 100ms);
  const auto step_tokens = static_cast<std::uint64_t>(t.loop.tokens_per_step());
  t.step_time = 30ms;
  t.steps(3);  // 90 ms
  EXPECT_TRUE(t.group.token_claims.empty()) << "the round's time is not up";
  t.steps(1);  // 120 ms: the round starts
  ASSERT_EQ(t.group.token_claims.size(), 1u);
  EXPECT_EQ(t.group.token_claims[0], 4 * step_tokens);
  t.step_time = 40ms;  // a slower machine: three steps a round, the last ending 20 ms past it
  t.steps(3);
  ASSERT_EQ(t.group.token_claims.size(), 2u);
  EXPECT_EQ(t.group.token_claims[1], 3 * step_tokens);
  EXPECT_EQ(t.diloco.shared().round(), 1u) << "round 1 landed when round 2 started";
  // Slower still: a second step would end 40 ms past the round's 100 ms, more than its nominal
  // step (100 / H = 25 ms) past; the round ends after one (the others do not wait for it).
  t.step_time = 70ms;
  t.steps(1);
  ASSERT_EQ(t.group.token_claims.size(), 3u);
  EXPECT_EQ(t.group.token_claims[2], step_tokens);
  t.step_time = 500ms;  // one step past the round's time: still one step's round
  t.steps(1);
  ASSERT_EQ(t.group.token_claims.size(), 4u);
  EXPECT_EQ(t.group.token_claims[3], step_tokens);
  EXPECT_EQ(t.loop.steps(), 9u) << "the step count is the steps taken";
}

// Paced by the tracker: the first phase is H steps of the member's own, the round claims the
// phase's seconds a step, and from the commit that brings the tracker's phase on, phases last that
// long. The learning-rate schedule follows the run: round × H plus the phase's elapsed share of H,
// not the steps this member took.
TEST(DiLoCoOverlap, APacedPhaseLastsTheTrackersTimeAndTheScheduleFollowsTheRun) {
  using namespace std::chrono_literals;
  Trainer t(true, {}, /*paced=*/true);
  const auto step_tokens = static_cast<std::uint64_t>(t.loop.tokens_per_step());
  t.step_time = 30ms;
  t.group.phase = 200ms;
  t.group.outcome_early = true;
  t.steps(4);  // H steps: round 1 starts
  ASSERT_EQ(t.group.step_claims.size(), 1u);
  EXPECT_NEAR(t.group.step_claims[0], 0.030f, 1e-6f);
  EXPECT_EQ(t.loop.schedule_step(), 4u) << "round 1's mean is in: the run is at 1 x H";
  t.steps(3);  // 90 ms of the tracker's 200: round 1 landed with the tracker's phase
  EXPECT_EQ(t.diloco.shared().round(), 1u);
  EXPECT_EQ(t.loop.schedule_step(), 4u + 1u) << "4 + floor(4 x 90 / 200)";
  EXPECT_EQ(t.loop.steps(), 7u);
  t.steps(3);  // 180 ms
  EXPECT_EQ(t.group.step_claims.size(), 1u) << "the phase's 200 ms are not up";
  t.steps(1);  // 210 ms: round 2 starts, 7 steps
  ASSERT_EQ(t.group.token_claims.size(), 2u);
  EXPECT_EQ(t.group.token_claims[1], 7 * step_tokens);
  EXPECT_NEAR(t.group.step_claims[1], 0.030f, 1e-6f);
  EXPECT_EQ(t.loop.schedule_step(), 8u) << "2 x H, whatever the steps taken (11)";
}

// A round replaced by the run's state between two steps puts the loop at round × H once: the
// next round, started H steps later, does not put it back there (the step count went back H, and
// the peer ran a round behind the run to its end: issue 49).
TEST(DiLoCoOverlap, AReplacedRoundPlacesTheLoopOnce) {
  Trainer t(true);
  t.group.outcome_early = true;
  t.steps(4);                // round 1 starts
  t.group.replace_with = 2;  // the run is at round 2 when this member's round 1 is replaced
  t.steps(1);                // round 1 lands, replaced: the loop is at 2 × H
  EXPECT_EQ(t.diloco.shared().round(), 2u);
  EXPECT_EQ(t.loop.steps(), 8u);
  t.steps(4);  // round 3 starts
  EXPECT_EQ(t.group.token_claims.size(), 2u) << "round 3 started";
  EXPECT_EQ(t.loop.steps(), 12u) << "the steps go on from the run's place";
  t.steps(4);  // round 3 lands, round 4 starts
  EXPECT_EQ(t.diloco.shared().round(), 3u);
  EXPECT_EQ(t.loop.steps(), 16u);
}

// A member left out of a round is told to fetch the run's state as that round commits, when the
// others begin their next phase. Its own phase is counted from then (an eighth of a phase early,
// for the commit's round trip), not from the fetch's end: it says ready with the others, with the
// tokens of the steps it took since the fetch. Counted from the fetch's end, a paced slow peer
// whose fetch outlasted the straggler wait missed every round (issue 49).
TEST(DiLoCoOverlap, AFetchedStatesPhaseIsCountedFromTheResyncNotTheFetchsEnd) {
  using namespace std::chrono_literals;
  Trainer t(true, {}, /*paced=*/true);
  const auto step_tokens = static_cast<std::uint64_t>(t.loop.tokens_per_step());
  t.step_time = 30ms;
  t.group.phase = 200ms;
  t.group.outcome_early = true;
  t.steps(4);  // H steps of its own (no phase yet): round 1 starts at 120 ms
  t.group.replace_with = 2;
  t.group.told = TimePoint(50ms);  // told to fetch at 50 ms; the fetch ends at the next step
  t.steps(1);                      // 150 ms: replaced by round 2's state
  ASSERT_EQ(t.diloco.shared().round(), 2u);
  t.steps(2);  // 210 ms: 50 - 25 + 200 = 225 ms not reached
  EXPECT_EQ(t.group.token_claims.size(), 1u);
  t.steps(1);  // 240 ms: round 3 starts with the 3 steps since the fetch (from 150 ms: 7 steps)
  ASSERT_EQ(t.group.token_claims.size(), 2u);
  EXPECT_EQ(t.group.token_claims[1], 3 * step_tokens);
  EXPECT_NEAR(t.group.step_claims[1], 0.030f, 1e-6f) << "its step time, not the fetch's";
}

// Left out of a round mid-phase (its first, H steps of its own: no phase yet), a paced member
// takes the state it was resynced to at its next step, its phase counted from the resync, rather
// than train out H steps on the state the run left (issue 49).
TEST(DiLoCoOverlap, APacedMemberTakesTheStateItWasResyncedToAtItsNextStep) {
  using namespace std::chrono_literals;
  Trainer t(true, {}, /*paced=*/true);
  const auto step_tokens = static_cast<std::uint64_t>(t.loop.tokens_per_step());
  t.step_time = 30ms;
  t.group.phase = 200ms;
  t.steps(2);  // 60 ms, of H = 4 steps of its own
  t.group.waiting = 2;
  t.group.told = TimePoint(50ms);
  t.steps(1);  // 90 ms: round 2's state, its phase from 50 - 25 = 25 ms
  ASSERT_EQ(t.diloco.shared().round(), 2u);
  t.steps(4);  // 210 ms: H = 4 steps of its own would have started a round at 120 ms
  EXPECT_TRUE(t.group.token_claims.empty());
  t.steps(1);  // 240 ms: 215 ms of the 200 ms phase; the 5 steps since the state came
  ASSERT_EQ(t.group.token_claims.size(), 1u);
  EXPECT_EQ(t.group.token_claims[0], 5 * step_tokens);
}

TEST(DiLoCoOverlap, RoundsOfFixedHDoNotLookForAReplacedStateBetweenRounds) {
  Trainer t(true);
  t.group.waiting = 2;
  t.steps(3);
  EXPECT_EQ(t.group.replaced_asks, 0);
  EXPECT_EQ(t.diloco.shared().round(), 0u);
}

// A newcomer of a paced run trains the phase its join's resync carried, counted from that resync,
// not H steps of its own (issue 49).
TEST(DiLoCoOverlap, ANewcomersFirstPacedPhaseIsTheJoinsPhaseFromItsResync) {
  using namespace std::chrono_literals;
  Trainer t(true, {}, /*paced=*/true);
  const auto step_tokens = static_cast<std::uint64_t>(t.loop.tokens_per_step());
  t.step_time = 30ms;
  t.now = TimePoint(100ms);
  t.diloco.begin(t.loop, Start::joined);
  t.diloco.joined_paced(200ms, TimePoint(100ms));  // from 100 - 25 = 75 ms
  t.steps(5);                                      // 250 ms: 175 ms of the phase
  EXPECT_TRUE(t.group.token_claims.empty()) << "not H = 4 steps of its own";
  t.steps(1);  // 280 ms: 205 ms
  ASSERT_EQ(t.group.token_claims.size(), 1u);
  EXPECT_EQ(t.group.token_claims[0], 6 * step_tokens);
}

TEST(DiLoCoOverlap, RoundsOfFixedHClaimNoTokens) {
  Trainer t(true);
  t.steps(8);
  EXPECT_EQ(t.group.token_claims, (std::vector<std::uint64_t>{0, 0}));
}

}  // namespace
}  // namespace loco::train
