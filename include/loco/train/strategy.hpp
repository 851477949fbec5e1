#pragma once
// How a peer's inner loop takes part in the run: the strategy the training loop calls at every
// step, and the group it averages with.
//
// The training loop every driver runs (step_loop.hpp) reads:
//   strategy.begin(loop)
//   while (...) {
//     loss = loop.forward_backward();
//     if (strategy.on_gradients(loop)) loop.optimizer_step();
//     strategy.after_step(loop);
//   }
//   strategy.finish(loop)
// Each strategy of docs/DESIGN.md §1 fits it:
//   - DDP (ddp.hpp): on_gradients averages the gradients over the group every step.
//   - DiLoCo (diloco.hpp): after_step runs a round every H steps: Δ = θ_old − θ_new averaged,
//     outer Nesterov, θ_local ← θ.
//   - Streaming DiLoCo: after_step starts fragment p's round at step t_p (through an asynchronous
//     group, a sibling of OuterGroup: start now, finish τ steps later) and applies it with the
//     α-merge τ steps later; the inner loop keeps stepping meanwhile.
//   - Eager updates: after_step applies the proxy Δ̃ = Δ̄(t−1) + (Δ(t) − Δ(t−1))/M while round t
//     travels, and folds the true mean in when it lands (the same asynchronous group).
//   - DeMo: on_gradients does its own update (decoupled momentum, DCT top-k, all-gather of the
//     components through a GatherGroup, gather_group.hpp; sign of the mean) and returns false:
//     no AdamW step (demo.hpp).
//   - SparseLoCo (sparseloco.hpp): after_step runs a round every H steps: the chunk-wise top-k of
//     its error-feedback accumulator e ← βe + Δ, all-gathered through a GatherGroup, θ moved by
//     the members' clipped mean, θ_local ← θ.
// shared() is what must stay bit-identical across members and go into checkpoints and resyncs.

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "loco/core/hash.hpp"
#include "loco/core/time.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/shared_state.hpp"
#include "loco/train/train_state_file.hpp"

namespace loco::train {

// How a process starts training.
enum class Start {
  fresh,    // a new run: the shared state takes its genesis from the loop's initial parameters
  resumed,  // the loop and the shared state both came from a checkpoint: nothing to do
  joined,   // the shared state came from the run (fetched): the loop starts from it
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Before the first step: brings the loop and the shared state together.
  virtual void begin(InnerLoop& loop, Start how) = 0;
  // Between backward and the optimizer step. False: the strategy updated the parameters itself.
  virtual bool on_gradients(InnerLoop& loop) = 0;
  // After begin(joined), in a run paced by the tracker: the phase the join's fetch was told
  // (`phase`, 0: none) and when it was told (`told`, zero: not known). DiLoCo's first phase lasts
  // it, counted from then, as after a replaced round: without it a slow newcomer trained H steps
  // of its own and sat out the rounds of that time (docs/STRATEGIES.md).
  virtual void joined_paced(Duration /*phase*/, TimePoint /*told*/) {}
  // After each step.
  virtual void after_step(InnerLoop& loop) = 0;
  // After the last step, before the process leaves or checkpoints for the last time: lands a
  // round still in flight (DiLoCo's overlapped round), so that it stops with the run's state.
  virtual void finish(InnerLoop& /*loop*/) {}
  // The state every member holds the same (empty for none).
  virtual SharedState& shared() = 0;
  // This member's own state that a checkpoint carries besides the loop's and the shared state
  // (DeMo's momentum), by name.
  virtual std::vector<NamedArena> own_arenas() { return {}; }
};

// One round of averaging, as a strategy asks for it. The group averages `delta` with the other
// members' (every member gets the same bits), then calls tentative(mean): the strategy computes
// the shared state the mean leads to, without installing it, and returns its manifest (its hash
// is the state's; a group that serves the state keeps it, so that a round hashes the state once).
// Once the group has committed the round (every member computed the same state), install()
// makes it current. A round that cannot complete (too few members, repeated failures) is skipped:
// nothing is installed and the strategy goes on training. A member that fell out of sync gets the
// majority's state put into its SharedState by the group (replaced).
// What a round bounded by time tells its group about the phase behind Δ: claims the tracker
// bounds (docs/STRATEGIES.md, "Rounds bounded by time"). A group alone ignores them.
struct PhaseClaim {
  // The tokens Δ was trained on, by which the group weighs it (proto/token_weights.hpp); 0: the
  // plain mean (rounds of fixed H).
  std::uint64_t tokens = 0;
  // Seconds per inner step over the phase (proto/round_pace.hpp); 0: not measured.
  float step_seconds = 0;
};

struct RoundInput {
  std::uint64_t round = 0;
  std::span<const float> delta;  // read during run_round only
  float delta_norm = 0;
  PhaseClaim claim{};
  // `mean` stays valid until install() or the next tentative() of the round.
  std::function<proto::StateManifest(std::span<const float> mean)> tentative;
  std::function<void()> install;
};

struct RoundResult {
  enum class Kind { committed, skipped, replaced };
  Kind kind = Kind::skipped;
  std::size_t members = 0;
  // This member's share of the group's weighted mean (rounds bounded by time: its tokens / the
  // group's); 0: the plain mean, or not known.
  double share = 0;
  // Rounds paced by the tracker: how long the next inner phase lasts, as the tracker set it from
  // the members' step times (proto/round_pace.hpp); 0: not set.
  Duration phase{};
  // The hash of the shared state after the round, as the group computed it (committed: the hash
  // the group agreed on), so that a caller printing it does not hash the state again. A group
  // that does not hash leaves it zero.
  Digest state{};
  // Replaced: when this member was told to fetch the state, on the clock of the group's events
  // (the strategy's clock); the run's next phase began about then. Zero: not known.
  TimePoint told{};
};

class OuterGroup {
 public:
  virtual ~OuterGroup() = default;
  virtual RoundResult run_round(const RoundInput& input) = 0;
};

}  // namespace loco::train
