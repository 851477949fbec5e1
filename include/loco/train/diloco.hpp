#pragma once
// DiLoCo (docs/DESIGN.md §1.1): H inner steps of AdamW on the local copy, then a round: the
// pseudo-gradient Δ = θ_old − θ_new (old minus new) averaged over the group, an outer Nesterov
// step on the shared θ and v, and the local copy reset to the new θ. Inner AdamW state stays
// local. A skipped round leaves θ as it was: Δ keeps growing until a round succeeds.
// A state taken from the run (joined, or a replaced round) puts the loop at round × H steps, its
// place in the learning-rate schedule.
//
// Rounds bounded by time (round_time > 0, or paced, docs/STRATEGIES.md): an inner phase ends at
// the first step that ends the phase's time or more after the phase began (at least one step),
// and the round tells the group the tokens its Δ was trained on (the steps since the local copy
// last started from the shared θ, times the tokens of a step), by which the group weighs it, and
// the phase's seconds per step. Paced, the phase's time is the tracker's (RoundResult::phase,
// from the members' step times), round_time until the first one comes (0: H steps of its own).
// The loop's step count, and with it the data cursor, follows the steps actually taken (a replaced
// round keeps it); the learning-rate schedule follows the run: round × H plus the phase's elapsed
// share of H, the same for every member at the same time.
//
// Over a swarm the round overlaps the next inner phase (overlapped_group.hpp): once the mean is
// in, the local copy is set to the θ' it leads to and the inner steps go on, while the network
// thread hashes θ' ‖ v' and the group commits; the round lands (θ, v stepped in place) as soon as
// the commit is in, at the next round at the latest. The compute thread waits for the all-reduce
// only, not for the hash and the commit. Where the round does not go as its first mean said, the
// steps taken meanwhile are kept, as a skipped round keeps its: a retry after the mean (another
// group, another mean) installs its own θ', and the next Δ = θ − θ_local carries the difference;
// a round skipped after the mean leaves θ as it was, and the next Δ carries the outer step again.
//
// Memory, for n parameters: θ and v shared (8n bytes) beside the inner loop's, and nothing the
// size of the model for Δ: it is written into the inner loop's gradient arena, idle between the
// phase's last optimizer step and the next phase's first backward, which overwrites it
// (model.hpp); the round reads it only until then (the overlapped round until mean() returns,
// the blocking one during run_round). A trainer that is not an InnerLoop (round(Arena&)) has
// its own Δ (4n). Over a swarm's direct exchange the group encodes Δ once (c·n bytes, c = 1.02
// with int8) and the mean comes as its owners' encoded chunks (c·n, proto/round_mean.hpp), so a
// round holds 2c·n bytes and no fp32 vector (proto/peer_core.hpp; the ring copies Δ and keeps an
// fp32 mean, 8n). The mean is read chunk by chunk, decoded into scratch, and the state it leads to
// is never held: tentative(mean) computes θ', v' chunk by chunk and hashes each chunk as it is
// computed (train::hash_chunks, in parallel over the compute threads), and install() applies the
// same outer step to θ and v in place (elementwise, so the bits are those that were hashed). The
// mean stays the group's until install (strategy.hpp).

#include <functional>
#include <optional>

#include "loco/core/time.hpp"
#include "loco/optim/outer_nesterov.hpp"
#include "loco/train/overlapped_group.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

struct DiLoCoConfig {
  std::uint64_t inner_steps = 20;  // H
  optim::OuterNesterovConfig outer;
  Duration round_time{};  // > 0: rounds bounded by time (the class comment); 0: every H steps
  bool paced = false;     // the tracker sets each phase's time (round_time: the first phase's)
  std::function<TimePoint()> clock = steady_now;  // the simulator's is virtual

  void validate() const;  // throws Error(config)
};

// Where a blocking round's time went (DiLoCo::round(Arena&)), by the config's clock: the trainer
// peer reports it (host/trainer_peer.hpp). An overlapped round fills delta_s, exchange_s (the wait
// for the mean) and outer_s (the preview of θ'), and logs them at debug level; no clock: zeros.
struct RoundTimes {
  double delta_s = 0;     // Δ = θ − θ_local and its norm
  double exchange_s = 0;  // the group: Δ encoded, the all-reduce, the commit (minus the two below)
  double hash_s = 0;      // θ' ‖ v' computed chunk by chunk and hashed (tentative)
  double outer_s = 0;     // the outer step applied to θ and v in place (install)
};

class DiLoCo final : public Strategy {
 public:
  // Names of the shared arenas (checkpoint prefixes).
  static constexpr const char* kOuterParams = "outer.params";
  static constexpr const char* kOuterMomentum = "outer.momentum";
  static std::vector<std::string> shared_names() { return {kOuterParams, kOuterMomentum}; }

  // With `overlapped` (outliving it), rounds overlap the next inner phase.
  DiLoCo(DiLoCoConfig config, const std::shared_ptr<const ArenaLayout>& layout, OuterGroup& group,
         OverlappedGroup* overlapped = nullptr);

  void begin(InnerLoop& loop, Start how) override;
  void joined_paced(Duration phase, TimePoint told) override;
  bool on_gradients(InnerLoop&) override { return true; }
  void after_step(InnerLoop& loop) override;
  void finish(InnerLoop& loop) override;
  SharedState& shared() override { return shared_; }

  // Runs the round now (after_step does every H steps). Overlapped: starts it, and returns the
  // outcome of the round before (landed first).
  RoundResult round(InnerLoop& loop);
  // The round for a trainer that is not an InnerLoop (the C API, host/trainer_peer.hpp):
  // Δ = θ − params, and unless skipped params ← the new θ. The caller keeps its place in the
  // learning-rate schedule.
  RoundResult round(Arena& params);
  const RoundResult& last_round() const { return last_; }
  const RoundTimes& last_times() const { return times_; }  // of round(Arena&)

  // For a trainer that is not an InnerLoop and overlaps its rounds (host/trainer_peer.hpp): from
  // now on round(Arena&) starts the round and returns once its mean is in (params ← the θ' it
  // leads to), and land(params) lands it (replaced: params ← θ). Before the first round; `group`
  // outlives this.
  void overlap_with(OverlappedGroup& group);
  bool pending() const { return pending_ != 0; }  // a round started and not landed
  bool outcome_in() const { return pending_ != 0 && overlapped_->outcome_in(); }
  RoundResult land(Arena& params);

 private:
  Arena& theta() { return shared_.arena(0); }
  Arena& momentum() { return shared_.arena(1); }

  // The overlapped round: the local copy set to the state `mean` leads to.
  void preview(Arena& params, const proto::RoundMean& mean) const;
  // install: the outer step of `mean` on θ and v in place.
  void outer_step(const proto::RoundMean& mean);
  // The round with Δ written into `delta` (the gradient arena, or delta_).
  RoundResult round(Arena& params, std::span<float> delta);
  // A replaced round puts the loop at the run's place in the learning-rate schedule.
  RoundResult placed(InnerLoop& loop, const RoundResult& result) const;
  bool timed() const { return config_.round_time > Duration::zero() || config_.paced; }
  bool phase_over(const InnerLoop& loop) const;
  // The local copy starts again from θ (or the state a mean leads to): a new phase.
  void rebased();
  void new_phase();
  // Timed: after a replaced round, the phase counted from when this member was told to fetch.
  void phase_from(TimePoint told);
  // Timed: the run's place in the learning-rate schedule for the next step (the class comment).
  void place_in_schedule(InnerLoop& loop) const;
  // Paced, between rounds: a state the run replaced this member's with (left out of a round)
  // starts its phase now, not at the end of a phase on the state the run left behind.
  void take_replaced(InnerLoop& loop);
  // Paced: the tracker's phase for the next phase, if the round brought one.
  void take_phase(const RoundResult& result);
  float step_seconds() const;  // over the phase so far

  DiLoCoConfig config_;
  OuterGroup& group_;
  OverlappedGroup* overlapped_;
  std::uint64_t pending_ = 0;  // the overlapped round started and not landed, 0: none
  SharedState shared_;
  // The manifest of the state `mean` leads to, computed without holding that state.
  proto::StateManifest tentative(const proto::RoundMean& mean, std::uint64_t round) const;

  std::optional<Arena> delta_;            // Δ of round(Arena&), made at its first round
  std::optional<proto::RoundMean> mean_;  // the blocking round's last tentative's, for install
  RoundResult last_;
  RoundTimes times_;
  // Rounds bounded by time: the tokens of a step, the steps since the local copy last started
  // from θ, and when the inner phase began.
  std::uint64_t step_tokens_ = 0;
  std::uint64_t base_steps_ = 0;
  TimePoint phase_start_{};
  TimePoint steps_start_{};        // when the phase's first step began (its step time's start)
  std::uint64_t phase_steps_ = 0;  // steps since steps_start_
  Duration phase_{};               // the phase's time: round_time, or the tracker's
};

}  // namespace loco::train
