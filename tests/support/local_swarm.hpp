#pragma once
// A tracker and loco-peer processes on loopback for one test, in a fresh directory, training the
// run of peer_process.hpp. The tracker can be killed and started again on the same address, key
// and state file.

#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "peer_process.hpp"
#include "temp_dir.hpp"
#include "tracker_process.hpp"

namespace loco::test {

class LocalSwarm {
 public:
  // `tracker_options` replace or add to kSwarmTimers; `strategy` is the run config's
  // [strategy] section (write_swarm_config).
  LocalSwarm(std::string run_id, std::uint64_t rounds, std::vector<std::string> tracker_options,
             const std::string& strategy = kDiLoCoStrategy)
      : run_id_(std::move(run_id)), config_(write_swarm_config(dir_.path(), rounds, strategy)) {
    tracker_options_ = kSwarmTimers;
    tracker_options_.insert(tracker_options_.end(), tracker_options.begin(), tracker_options.end());
    start_tracker("127.0.0.1:0");
  }

  // (Re)starts the tracker; the first time on any port, then on the address it had.
  void start_tracker(const std::string& listen) {
    tracker_ =
        std::make_unique<TrackerProcess>(dir_.path(), run_id_, tracker_options_, listen, config_);
    if (tracker_->started()) address_ = tracker_->address();
  }
  void restart_tracker() { start_tracker(address_); }

  // Starts peer `name` with `extra` options.
  PeerProcess& add_peer(const std::string& name, const std::vector<std::string>& extra = {}) {
    peers_.push_back(std::make_unique<PeerProcess>(SwarmRun{.dir = dir_.path(),
                                                            .run_id = run_id_,
                                                            .config = config_,
                                                            .tracker_address = address_,
                                                            .tracker_key = tracker_->public_key()},
                                                   name, extra));
    return *peers_.back();
  }

  TrackerProcess& tracker() { return *tracker_; }
  const TempDir& dir() const { return dir_; }
  // Everything the processes logged, for a failed assertion's message.
  std::string logs() const {
    std::string all = "--- tracker\n" + tracker_->log();
    for (std::size_t i = 0; i < peers_.size(); ++i)
      all += "--- peer " + std::to_string(i) + "\n" + peers_[i]->log();
    return all;
  }

 private:
  TempDir dir_;
  std::string run_id_;
  std::string config_;
  std::vector<std::string> tracker_options_;
  std::unique_ptr<TrackerProcess> tracker_;
  std::string address_;
  std::vector<std::unique_ptr<PeerProcess>> peers_;
};

// True when every peer in `peers` committed every round in [first, last] with the same state.
inline ::testing::AssertionResult same_states(const std::vector<PeerProcess*>& peers,
                                              std::uint64_t first, std::uint64_t last) {
  for (std::uint64_t r = first; r <= last; ++r) {
    std::string seen;
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const auto committed = peers[i]->committed();
      if (!committed.contains(r))
        return ::testing::AssertionFailure() << "peer " << i << " did not commit round " << r;
      if (seen.empty()) seen = committed.at(r);
      if (committed.at(r) != seen)
        return ::testing::AssertionFailure() << "round " << r << ": peer " << i << " holds "
                                             << committed.at(r) << ", not " << seen;
    }
  }
  return ::testing::AssertionSuccess();
}

// Starts newcomer `name` with `options` and checks that it catches up: it fetches the run's state,
// commits rounds, and holds the state of every peer in `members` for `rounds` rounds from its first
// committed one (put in `first` for the caller's own checks). Then stops them all with SIGTERM.
inline void expect_newcomer_catches_up(LocalSwarm& swarm, std::vector<PeerProcess*> members,
                                       const std::string& name,
                                       const std::vector<std::string>& options,
                                       std::uint64_t rounds, std::uint64_t& first) {
  PeerProcess& newcomer = swarm.add_peer(name, options);
  ASSERT_TRUE(newcomer.wait_committed()) << swarm.logs();
  first = newcomer.committed().begin()->first;
  members.push_back(&newcomer);
  for (PeerProcess* p : members) ASSERT_TRUE(p->wait_round(first + rounds)) << swarm.logs();
  EXPECT_TRUE(same_states(members, first, first + rounds)) << swarm.logs();
  EXPECT_NE(newcomer.log().find("fetched the state of round"), std::string::npos) << newcomer.log();
  for (PeerProcess* p : members) EXPECT_EQ(p->process().stop(SIGTERM), 0) << swarm.logs();
}

// Two peers train (steps of 50 ms, min-peers 2) past round 5, then a newcomer joins and must catch
// up (expect_newcomer_catches_up, `rounds` rounds). Returns its first committed round.
inline std::uint64_t newcomer_after_round_five(const std::string& run_id,
                                               const std::string& strategy, std::uint64_t rounds) {
  LocalSwarm swarm(run_id, 1000, {"--run.min-peers", "2"}, strategy);
  std::uint64_t first = 0;
  if (!swarm.tracker().started()) {
    ADD_FAILURE() << swarm.logs();
    return first;
  }
  const std::vector<std::string> options = {"--debug.step-delay", "50"};
  PeerProcess& a = swarm.add_peer("peer0", options);
  PeerProcess& b = swarm.add_peer("peer1", options);
  if (!a.wait_round(5)) {
    ADD_FAILURE() << "the first two peers never reached round 5\n" << swarm.logs();
    return first;
  }
  expect_newcomer_catches_up(swarm, {&a, &b}, "peer2", options, rounds, first);
  return first;
}

}  // namespace loco::test
