#pragma once
// One loco-tracker replica as a simulated process (docs/TRACKER.md, "Running replicas"): the
// same decisions as loco-tracker's (replica/candidate.hpp: campaign, lease, looks; the state
// saved through replica/fenced_state.hpp) over the simulator's store (store_model.hpp), in
// virtual time. While it follows it does not listen (a peer's connection is refused, as by a
// follower's closed port); once it leads it loads the run's state from the store and runs a
// TrackerNode (tracker_node.hpp) on its own network node, whose every save is fenced on its term.
// It stops leading at once when a look finds it deposed or a save is refused, and follows again.
//
// Faults, as the real process takes them: crash() is a SIGKILL (its lease expires on its own, a
// lease later), restart() a new process with a new lease; pause() a SIGSTOP and its SIGCONT: no
// input, timer or look runs meanwhile; on resume, the inputs that queued run first and its look
// after them (the harder order: a zombie leader then meets the fence, not its own look).

#include <cstdint>
#include <memory>
#include <optional>

#include "loco/replica/candidate.hpp"
#include "loco/replica/fenced_state.hpp"
#include "loco/sim/store_model.hpp"
#include "loco/sim/tracker_node.hpp"

namespace loco::sim {

class ReplicaNode {
 public:
  // `store` and what TrackerNode takes outlive the node; `index` is its client of the store.
  ReplicaNode(EventLoop& loop, Network& network, NodeId node, proto::TrackerCoreConfig config,
              const secure::KeyPair& identity, const Directory& directory, StoreModel& store,
              std::size_t index, replica::CandidateConfig candidate);

  void start();  // the process starts, and follows
  void crash();
  void restart() {
    crash();
    start();
  }
  void pause(Duration span);

  bool up() const { return candidate_ != nullptr; }
  bool leading() const { return tracker_.up(); }  // as far as it knows (a zombie does too)
  bool paused() const { return loop_.now() < paused_until_; }
  std::int64_t term() const { return candidate_ ? candidate_->term() : 0; }
  NodeId node() const { return tracker_.node(); }
  TrackerNode& tracker() { return tracker_; }
  // How often it took the lead, and how its terms ended: deposed by a look, by a refused save.
  std::uint64_t terms() const { return terms_; }
  std::uint64_t deposed_by_look() const { return deposed_by_look_; }
  std::uint64_t saves_refused() const { return saves_refused_; }

 private:
  void look();  // every Candidate::kPollPeriod while the process lives
  void lead();  // it leads now: the state loaded, the tracker started
  void step_down();

  EventLoop& loop_;
  std::size_t index_;
  replica::CandidateConfig config_;
  std::unique_ptr<replica::KvStore> client_;
  TrackerNode tracker_;
  std::unique_ptr<replica::Candidate> candidate_;  // of the process; null while down
  std::unique_ptr<replica::FencedState> fenced_;   // of the term
  std::uint64_t process_ = 0;
  TimePoint paused_until_{};
  std::uint64_t terms_ = 0;
  std::uint64_t deposed_by_look_ = 0;
  std::uint64_t saves_refused_ = 0;
};

}  // namespace loco::sim
