#pragma once
// Streaming DiLoCo (docs/DESIGN.md §1.2) and its eager updates (§1.3), over an AsyncOuterGroup.
//
// The parameters are cut into P fragments of whole layers (fragments.hpp). Fragment p has its
// slice of the shared outer parameters θ and momentum v. eager = none (the paper's Streaming):
//   after step s with (s − t_p) mod H = 0:      q = round mod P; Δ_q = θ_q − θ_q,local, start
//                                               its round (round + 1)
//   after step s + τ:                           Δ̄_q = the round's mean;
//                                               θ_q, v_q ← OuterNesterov(θ_q, v_q, Δ̄_q)
//                                               θ_q,local ← α·θ_q,local + (1−α)·θ_q
// Every round lands, so q = p; over a network a round may be skipped (too few peers): the
// round number stays and the same fragment goes again at the next slot, so the fragment of
// round r is always (r − 1) mod P and a newcomer with the state of round r knows its place
// (landed_step). A skipped landing changes nothing; a replaced one restarts the local copy.
// The τ steps between run while the fragment travels. With P = 1, τ = 0, α = 0 and the fp32
// codec this is DiLoCo bit for bit (same Δ, same member-order mean, same Nesterov, and
// 0·local + 1·θ = θ exactly).
//
// The eager variants keep the round in flight for a whole H (the mean of round k lands at the
// fragment's next send), and measure Δ from `anchor`, where the local fragment restarted:
//   at each send of fragment p (round k):
//     if round k−1 is in flight: Δ̄(k−1) = its mean; θ_p, v_p ← OuterNesterov(θ_p, v_p, Δ̄(k−1))
//     Δ_i(k) = anchor_p − θ_p,local
//     overlapped: Δ̃ = Δ̄(k−1) + (Δ_i(k) − Δ_i(k−1))/M   (Δ̄(0) = Δ_i(0) = 0)
//                 target = OuterNesterov applied to copies of θ_p, v_p with Δ̃ (the proxy)
//     delayed:    target = θ_p once Δ̄(k−1) is in (round 1: no target, the local copy goes on)
//     θ_p,local ← α·θ_p,local + (1−α)·target;  anchor_p ← θ_p,local;  start round k with Δ_i(k)
// so the true mean is folded in as the base of the next outer step, while the local copy already
// moved with the proxy (overlapped) or waits a round for it (delayed, the naive comparison).
// Round k−1 lands before round k starts: with P = 1 a group over a network sees one round at a
// time (P > 1 eager keeps P rounds in flight, which only an in-process group takes).
//
// Memory beyond DiLoCo: a tentative copy of the shared state (as DiLoCo's); eager adds the anchor
// and, overlapped, Δ_i(k−1) locally (two parameter copies) and Δ̄(k−1) in the shared state
// ("eager.mean"). Bytes: each fragment round hands over its encoded Δ_p, so a whole round of P
// fragments costs what one DiLoCo round does in the same codec, and the peak per sync is about 1/P
// of it.

#include <optional>
#include <string_view>

#include "loco/optim/outer_nesterov.hpp"
#include "loco/train/async_outer_group.hpp"
#include "loco/train/fragments.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

enum class Eager { none, overlapped, delayed };
Eager parse_eager(std::string_view name);  // throws Error(config)

struct StreamingConfig {
  std::uint64_t inner_steps = 20;  // H
  std::size_t fragments = 2;       // P
  std::uint64_t tau = 0;           // τ < H/P
  float alpha = 0.5f;              // α ∈ [0, 1]
  FragmentLayout layout = FragmentLayout::sequential;
  Eager eager = Eager::none;
  optim::OuterNesterovConfig outer;

  void validate() const;  // throws Error(config)
};

// The inner step after which round `round` lands (0 for round 0): round r (1-based) is fragment
// (r − 1) mod P of cycle (r − 1) div P, sent at t_p of that cycle and landed τ steps later, or,
// eager, at the fragment's next send. A newcomer's place in the lr schedule, and where a run of
// train.steps steps ends (run_end.hpp).
std::uint64_t landed_step(const StreamingConfig& config, std::uint64_t round);

class StreamingDiLoCo final : public Strategy {
 public:
  // The shared arenas: DiLoCo's two (so that P = 1 hashes alike), and Δ̄(k−1) when overlapped.
  static constexpr const char* kOuterParams = "outer.params";
  static constexpr const char* kOuterMomentum = "outer.momentum";
  static constexpr const char* kEagerMean = "eager.mean";
  static std::vector<std::string> shared_names(Eager eager);

  StreamingDiLoCo(StreamingConfig config, const std::shared_ptr<const ArenaLayout>& layout,
                  AsyncOuterGroup& group);

  // Start::resumed is refused (Error(config)) for eager runs and for a checkpoint taken while a
  // fragment was in flight: those depend on local state a checkpoint does not hold.
  void begin(InnerLoop& loop, Start how) override;
  bool on_gradients(InnerLoop&) override { return true; }
  void after_step(InnerLoop& loop) override;
  SharedState& shared() override { return shared_; }

  const std::vector<Fragment>& fragments() const { return fragments_; }
  const StreamingConfig& config() const { return config_; }
  const FragmentSchedule& schedule() const { return schedule_; }

  // Fragment rounds for a trainer that is not an InnerLoop (host/trainer_peer.hpp): the trainer
  // keeps the schedule (FragmentSchedule: after which of its steps a fragment leaves, and lands τ
  // steps later, or eager at the fragment's next send) and calls these, one round at a time.
  //   The trainer's parameters start from the shared θ (joined, or replaced): nothing in flight.
  void start_from_shared(Arena& params);
  //   The fragment the next round covers: the shared round mod P (a skipped round goes again).
  std::size_t next_fragment() const { return shared_.round() % fragments_.size(); }
  //   Δ_p of p = next_fragment() from params (eager: from the anchor), and its round started;
  //   returns p. Eager (P = 1): the merge of the round landed just before (delayed), or of the
  //   proxy (overlapped), goes into params here, as eager_sync does after a send.
  std::size_t start_fragment(Arena& params);
  bool fragment_started() const;
  std::size_t started_fragment() const;  // the fragment of the round started (one is)
  //   Waits for the started round and lands it: committed, params_p ← α·params_p + (1−α)·θ_p
  //   (eager: at the next start_fragment); replaced, start_from_shared(params); skipped, params
  //   unchanged (the next round sends the same fragment).
  RoundResult land_fragment(Arena& params);

 private:
  struct Flight {  // the round in flight (eager = none: at most one)
    std::size_t fragment = 0;
    AsyncOuterGroup::Handle handle = 0;
    std::uint64_t lands_after = 0;  // the inner step after which it lands
  };

  Arena& theta() { return shared_.arena(0); }
  Arena& momentum() { return shared_.arena(1); }

  // Δ_p = base − local into delta_, and its round started with landing(p).
  AsyncOuterGroup::Handle send(std::size_t p, const Arena& local, const Arena& base);
  // How fragment p's round lands: the tentative state is the shared state with the outer step
  // on θ_p and v_p (and, overlapped, Δ̄ in eager.mean) and round + 1. It may run on the group's
  // thread: it reads shared_ and writes tentative_ only.
  Landing landing(std::size_t p);
  // Finishes a round; a replaced state restarts the loop from it.
  RoundResult land(AsyncOuterGroup::Handle handle, InnerLoop& loop);
  void merge(std::size_t p, Arena& local, const Arena& target) const;  // the α-merge
  // False when the landing replaced the state (the loop restarted: nothing more this step).
  bool eager_sync(std::size_t p, InnerLoop& loop);
  // eager_sync's halves: round k−1 of fragment p landed (replaced: start_from_shared(local)), and
  // round k sent with the merge into local and the anchor moved.
  RoundResult eager_land(std::size_t p, Arena& local);
  void eager_send(std::size_t p, Arena& local);
  // After a replaced state: the local copy from θ, nothing in flight, the loop's step where the
  // run's round landed (its place in the lr schedule).
  void restart(InnerLoop& loop);

  StreamingConfig config_;
  AsyncOuterGroup& group_;
  std::vector<Fragment> fragments_;
  FragmentSchedule schedule_;
  SharedState shared_, tentative_;
  std::optional<Flight> flight_;                                   // eager = none
  std::vector<std::optional<AsyncOuterGroup::Handle>> in_flight_;  // eager, by fragment
  std::vector<float> delta_, mean_;                                // one fragment, gathered
  std::optional<Arena> anchor_;                                    // eager only
  std::optional<Arena> proxy_, proxy_v_, last_delta_;              // overlapped only
  bool eager_landed_ = false;  // eager: round k−1 committed just before round k's send
};

// The α-merge on a span: local ← α·local + (1−α)·global.
void alpha_merge(float alpha, std::span<float> local, std::span<const float> global);
// The eager proxy: out = mean_prev + (delta − delta_prev)/M.
void eager_proxy(std::span<const float> mean_prev, std::span<const float> delta,
                 std::span<const float> delta_prev, std::size_t members, std::span<float> out);

}  // namespace loco::train
