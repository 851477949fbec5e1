#pragma once
// A peer's session in a run, whichever driver runs it: loco-peer (peer/swarm_peer.cpp, over
// swarm::SwarmThread) and the simulator's strategy peers (sim/strategy_process.cpp, over a network
// side in virtual time). It owns the strategy, the group its rounds take and the session's order:
//
//   PeerSession(setup)   the run's strategy (train/make_strategy.hpp) over a SwarmGroup and its
//                        asynchronous group, begun at the run's genesis (Start::fresh)
//   join(resumed, ...)   the tracker admits the peer with the state it holds (the genesis, or its
//                        checkpoint's: `resumed`), and the run's state is fetched when the run is
//                        elsewhere
//   (the driver takes the data shard the tracker gave: loco-peer's feed, the simulator's shard)
//   start(joined)        the strategy goes on from the run's place when it fetched
//                        (Start::joined), paced as the tracker said
//   run(hooks)           the steps of train/step_loop.hpp while the run has more (train.steps and
//                        its final round, train/run_end.hpp); then a round still in flight lands
//   at_end()             whether it stands at the run's final round: the driver waits there for
//                        the tracker's word that the final state is kept (loco-peer in real time,
//                        the simulator in virtual time)
//   leave()              tells the tracker why: stopped, the run is over, or its steps are done
//
// The drivers keep what is theirs: loco-peer its process, signals, data feed, logs and stdout
// lines, checkpoint files, its wait and seeding at the run's end; the simulator its virtual time
// (StepHooks::before advances the compute thread's clock a step time), its liars and its figures.
// The C API's trainer peer (host/trainer_peer.hpp) has no session: its inner loop and steps are
// the trainer's own, its strategy writes into the trainer's buffers rather than a train::Strategy
// over an InnerLoop, and its user calls join, the rounds and leave.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "loco/core/time.hpp"
#include "loco/proto/state_manifest.hpp"
#include "loco/round/network_side.hpp"
#include "loco/round/swarm_async_group.hpp"
#include "loco/round/swarm_group.hpp"
#include "loco/train/gather_group.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/step_loop.hpp"
#include "loco/train/strategy.hpp"
#include "loco/train/train_config.hpp"

namespace loco::round {

struct PeerSetup {
  const train::TrainConfig& config;  // outlives the session
  train::InnerLoop& loop;            // outlives the session
  std::unique_ptr<NetworkSide> side;
  const std::atomic<bool>* stop = nullptr;  // a signal (loco-peer), a crash (the simulator)
  // The strategies' clock (rounds bounded by time): the simulator's is its virtual one.
  std::function<TimePoint()> clock = steady_now;
  // A gather group between the strategy and the swarm's (the simulator's lying SparseLoCo member,
  // sim/lying_gather.hpp), made once the swarm's is; none: the strategy gathers over the swarm's.
  std::function<std::unique_ptr<train::GatherGroup>(SwarmGroup&)> gather = {};
};

class PeerSession {
 public:
  explicit PeerSession(PeerSetup setup);

  train::Strategy& strategy() { return *strategy_; }
  SwarmGroup& group() { return group_; }
  const SwarmGroup& group() const { return group_; }
  SwarmAsyncGroup& async_group() { return async_group_; }

  // Joins (SwarmGroup::join) with the state the strategy holds: the genesis it began at, or, when
  // `resumed`, a checkpoint's loaded since (offered with the genesis' hash, which names the run).
  // Throws as SwarmGroup::join (the tracker's refusal...).
  JoinOutcome join(bool resumed, Duration patience);
  // After the join, once the driver took its data shard: a fetched state restarts the strategy at
  // the run's place (its lr schedule, Start::joined), and a run paced by the tracker paces it.
  // A peer that joined at or past the run's final round trains no more (ended_before).
  void start(const JoinOutcome& joined);

  // The run's final round as the tracker said at the join (0: none).
  std::uint64_t final_round() const { return final_round_; }
  // It joined at or past the run's final round: the run was over.
  bool ended_before() const { return ended_before_; }
  // Whether it trains another step (train::more_to_train, and not ended_before).
  bool more() const;
  // Steps while more() and not stopped, with `hooks` (train::run_steps); the strategy then lands
  // a round still in flight.
  void run(const train::StepHooks& hooks);
  // After run(): it stands at the run's final round, not stopped.
  bool at_end() const;
  // Tells the tracker why it leaves (stopped by a signal, the run is over, finished its steps)
  // and stops the network side: it then reads nothing of the strategy's.
  void leave();

 private:
  const train::TrainConfig& config_;
  train::InnerLoop& loop_;
  const std::atomic<bool>* stop_;
  // Declared in the order each needs the one before, so destroyed strategy first.
  SwarmGroup group_;
  SwarmAsyncGroup async_group_;  // Streaming's rounds, over the same swarm
  std::unique_ptr<train::GatherGroup> gather_;
  std::unique_ptr<train::Strategy> strategy_;  // DiLoCo, DDP, Streaming, DeMo or SparseLoCo
  proto::StateManifest genesis_;               // the strategy's state as it began
  std::uint64_t final_round_ = 0;
  bool ended_before_ = false;
};

}  // namespace loco::round
