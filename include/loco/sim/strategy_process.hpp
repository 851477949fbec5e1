#pragma once
// A simulated volunteer that trains with a real strategy: train::DiLoCo, Streaming DiLoCo (and
// its eager updates), DeMo, DDP or SparseLoCo, in loco-peer's session (round::PeerSession: the
// join, the strategy's start, the steps, the end) over round::SwarmGroup, the group loco-peer
// uses, on a small model of its own (train::InnerLoop on its data shard). Only the network side is
// simulated: its SwarmGroup talks to the process's PeerNode (peer_node.hpp) through a
// round::ComputeLink, as loco-peer's talks to its SwarmSession, so the rounds of every strategy run
// the code loco-peer runs, over simulated links and faults.
//
// The compute thread is a real thread that runs in turns with the event loop (Turns): exactly one
// of them runs at a time, so the run stays one deterministic sequence of events. The compute
// thread keeps its own virtual clock, which each inner step advances by the peer's step time; its
// commands (ready, round done, serve...) are scheduled on the event loop at the virtual time it
// gave them, and when it waits for an event it yields its turn: it is handed the turn back at its
// clock if an event is waiting by then, else at the event that arrives. So events reach it in
// virtual-time order, as a compute thread that runs in real time would see them; a strategy's
// landing (train::Landing::tentative) runs on the event loop's side while the compute thread
// waits, as it runs on loco-peer's network thread.
//
// A crash (the PeerNode destroyed) stops the compute thread: its waits return nothing and it
// unwinds without touching the network side again.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "loco/round/compute_link.hpp"
#include "loco/round/network_side.hpp"
#include "loco/sim/behaviour.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/strategy.hpp"
#include "loco/train/train_config.hpp"

namespace loco::round {
class PeerSession;
}  // namespace loco::round

namespace loco::train {
class InnerLoop;
}  // namespace loco::train

namespace loco::sim {

class PeerNode;

// What every strategy peer of a simulated run shares: the run's config and its tokens.
struct StrategyRun {
  // config.strategy is checked as loco-peer checks it (train/swarm_strategy.hpp); each process
  // stops as loco-peer does, after config.train.steps inner steps and at the run's final round
  // (train/run_end.hpp), which the simulator's tracker announces as loco-tracker does (swarm.hpp);
  // there it waits for the tracker's word that the final state is kept before it leaves.
  explicit StrategyRun(train::TrainConfig config);

  train::TrainConfig config;
  train::Corpus corpus;                  // read by one compute thread at a time
  Digest genesis{};                      // the hash of the shared state of round 0
  std::vector<proto::Setting> settings;  // what the tracker admits (train/run_settings.hpp)
  // Each process measures its validation loss once it finished (StrategyProcess::final_loss).
  bool evaluate = false;
};

// One thread runs at a time: the event loop hands the turn over and waits until it comes back.
class Turns {
 public:
  // The event loop's: runs the compute thread until it yields (or ends).
  void hand_over();
  // The compute thread's: gives the turn back and waits for the next.
  void yield();
  // The compute thread's, first thing: waits for its first turn.
  void wait_for_turn();
  // The compute thread's, last thing: gives the turn back for good.
  void finish();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool computing_ = false;
};

class StrategyProcess {
 public:
  // `node` (the process's network side) and `run` outlive this. A SparseLoCo member whose
  // `behaviour` changes updates lies in its messages (lying_gather.hpp), drawn from `seed`.
  StrategyProcess(PeerNode& node, const StrategyRun& run, Duration step_time,
                  Behaviour behaviour = Behaviour::honest, std::uint64_t seed = 0);
  // Stops the compute thread (a crash: nothing more reaches the network side) and joins it.
  ~StrategyProcess();

  // Starts the compute thread: it builds its loop and strategy and joins the run.
  void start();
  // The network side's, after each input: hands the compute thread its turn if it waits for an
  // event and one is there.
  void poke();

  round::Mailbox& mailbox() { return mailbox_; }
  round::SharedStateGuard& guard() { return guard_; }
  // Its inner loop's step (a peer that fetched the run's state continues from the run's).
  std::uint64_t steps() const { return steps_; }
  bool finished() const { return finished_; }
  Duration step_time() const { return step_time_; }
  // Once finished: the fp32 buffers its SwarmGroup allocated (SwarmGroup::update_buffers).
  std::size_t update_buffers() const { return update_buffers_; }
  // Once finished: the outcome of its last round (SwarmGroup::last_round).
  const train::RoundResult& last_round() const { return last_round_; }
  // The rounds it committed so far and the sum of its shares of their means (RoundResult::share:
  // its tokens ÷ the group's in a weighted round), read after each step.
  std::uint64_t rounds_committed() const { return rounds_committed_; }
  double shares() const { return shares_; }
  // Once finished: why the tracker refused its join, with which loco-peer exits (empty: joined).
  const std::string& refusal() const { return refusal_; }
  // Once finished, with StrategyRun::evaluate: its inner loop's validation loss after its last
  // step and round (InnerLoop::evaluate; SparseLoCo's loop then holds the shared θ). NaN: none.
  float final_loss() const { return final_loss_; }

 private:
  class Side;
  enum class Waiting { nothing, event, clock };

  // The compute thread's body: loco-peer's session (round/peer_session.hpp), with virtual time.
  void train();
  // Compute thread: the session's steps, each advancing its clock a step time.
  void run_steps(round::PeerSession& session, const train::InnerLoop& loop);
  // Compute thread: waits for the tracker's word at the run's final round, in virtual time.
  void wait_for_the_run_end();
  // Compute thread: schedules `action` on the event loop at its clock.
  void schedule(std::function<void(PeerNode&)> action);
  // Compute thread: yields until an event is waiting (Waiting::event) or until the event loop
  // has run everything scheduled up to its clock (Waiting::clock).
  void wait_for(Waiting what);
  // Event loop: runs the compute thread for a turn at `now`, then schedules what it asked for.
  void turn(TimePoint now);

  PeerNode& node_;
  const StrategyRun& run_;
  Duration step_time_;
  Behaviour behaviour_;
  std::uint64_t seed_;
  Turns turns_;
  std::thread thread_;
  round::Mailbox mailbox_;
  round::SharedStateGuard guard_;
  std::atomic<bool> stopping_{false};

  // Handed between the threads with the turn.
  TimePoint clock_{};  // the compute thread's virtual time
  std::deque<std::pair<TimePoint, std::function<void(PeerNode&)>>> scheduled_;
  Waiting waiting_ = Waiting::nothing;
  bool listening_ = false;  // it waits for an event, and its clock has passed
  bool finished_ = false;
  std::exception_ptr failure_;
  std::uint64_t steps_ = 0;
  std::size_t update_buffers_ = 0;
  train::RoundResult last_round_;
  std::uint64_t rounds_committed_ = 0;
  double shares_ = 0;
  std::string refusal_;
  float final_loss_ = std::numeric_limits<float>::quiet_NaN();
};

}  // namespace loco::sim
