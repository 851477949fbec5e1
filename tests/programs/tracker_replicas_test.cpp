// Tracker replicas over etcd with real processes on loopback (issue 47): a 3-member etcd, three
// loco-tracker replicas sharing one key, three loco-peer given every replica's address. The
// leading replica is SIGKILLed twice mid-run (and one etcd member once), or frozen past its
// lease and resumed (a zombie): rounds go on under the next leader, no peer commits a round
// twice, the peers that commit a round hold the same state for it, and the state in etcd is never
// behind a round a peer committed (nothing is announced before it is saved).

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../support/etcd_cluster.hpp"
#include "../support/local_swarm.hpp"
#include "loco/etcd/election.hpp"
#include "loco/proto/tracker_snapshot.hpp"

namespace loco {
namespace {

using test::PeerProcess;

constexpr int kReplicas = 3;

class Replicas {
 public:
  Replicas(const test::TempDir& dir, const std::string& run_id, const std::string& config,
           const test::EtcdCluster& cluster)
      : run_id_(run_id), client_(cluster.client_options()) {
    const auto key = secure::KeyPair::generate();
    secure::write_key_file(dir.path() / "tracker.key", key, false);
    public_key_ = secure::to_hex(key.public_key());
    std::string etcd;
    for (const auto& member : cluster.endpoints())
      etcd += (etcd.empty() ? "http://" : ",http://") + member.host + ":" + member.port;
    for (int i = 0; i < kReplicas; ++i) {
      const std::string listen = "127.0.0.1:" + std::to_string(test::free_loopback_port());
      addresses_ += (i ? "," : "") + listen;
      const std::string name = "r" + std::to_string(i);
      std::vector<std::string> argv = {test::program("loco-tracker"),
                                       "--tracker.key",
                                       (dir.path() / "tracker.key").string(),
                                       "--tracker.listen",
                                       listen,
                                       "--tracker.state-file",
                                       (dir.path() / (name + ".state")).string(),
                                       "--tracker.etcd",
                                       etcd,
                                       "--tracker.replica",
                                       name,
                                       "--tracker.etcd-lease",
                                       "2s",
                                       "--tracker.http",
                                       "",
                                       "--run.id",
                                       run_id,
                                       "--run.config",
                                       config,
                                       "--admission.policy",
                                       "open",
                                       "--tracker.max-members-per-address",
                                       "0"};
      argv.insert(argv.end(), test::kSwarmTimers.begin(), test::kSwarmTimers.end());
      logs_.push_back(dir.path() / (name + ".log"));
      processes_.push_back(std::make_unique<test::ChildProcess>(argv, logs_.back()));
    }
  }

  // The replica that leads now, once one does that is not `other` (a hang guard of 60 s).
  int wait_leader(int other = -1) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      try {
        if (const auto leader = etcd::Election::observe(client_, "/loco/" + run_id_ + "/leader/")) {
          const int i = leader->value.back() - '0';
          if (i != other && leader->value == "r" + std::to_string(i)) return i;
        }
      } catch (const Error&) {
        // an etcd member down: the next try goes to another
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }

  void kill(int i) { EXPECT_EQ(processes_.at(i)->stop(SIGKILL), -1); }
  void signal(int i, int signal) { ASSERT_EQ(::kill(processes_.at(i)->pid(), signal), 0); }

  // The committed round of the state the leaders saved in etcd.
  std::uint64_t saved_round() {
    const auto found = client_.range(etcd::one_key("/loco/" + run_id_ + "/state"));
    if (found.kvs.empty()) return 0;
    const std::string& value = found.kvs.front().value;
    const auto* first = reinterpret_cast<const std::byte*>(value.data());
    return proto::decode_snapshot(std::vector<std::byte>(first, first + value.size()), "etcd")
        .committed_round;
  }

  const std::string& addresses() const { return addresses_; }
  const std::string& public_key() const { return public_key_; }
  std::string log(int i) const { return test::read_text(logs_.at(i)); }
  std::string logs() const {
    std::string all;
    for (std::size_t i = 0; i < logs_.size(); ++i)
      all += "--- replica r" + std::to_string(i) + "\n" + test::read_text(logs_[i]);
    return all;
  }

 private:
  std::string run_id_;
  etcd::EtcdClient client_;
  std::string public_key_;
  std::string addresses_;
  std::vector<std::filesystem::path> logs_;
  std::vector<std::unique_ptr<test::ChildProcess>> processes_;
};

// No peer committed a round twice, and the peers that committed a round hold the same state.
::testing::AssertionResult one_commit_per_round(const std::vector<PeerProcess*>& peers) {
  std::map<std::uint64_t, std::string> states;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    std::map<std::uint64_t, int> times;
    for (const test::RoundLine& r : peers[i]->rounds()) {
      if (r.kind != "committed") continue;
      if (++times[r.round] > 1)
        return ::testing::AssertionFailure()
               << "peer " << i << " committed round " << r.round << " twice";
      const auto [it, first] = states.emplace(r.round, r.state);
      if (!first && it->second != r.state)
        return ::testing::AssertionFailure() << "round " << r.round << ": peer " << i << " holds "
                                             << r.state << ", another " << it->second;
    }
  }
  return ::testing::AssertionSuccess();
}

std::uint64_t newest_round(const std::vector<PeerProcess*>& peers) {
  std::uint64_t newest = 0;
  for (PeerProcess* p : peers)
    if (!p->rounds().empty()) newest = std::max(newest, p->rounds().back().round);
  return newest;
}

// A 3-member etcd, the replicas, and three peers past round 3.
struct ReplicaSwarm {
  test::EtcdCluster cluster{3};
  test::TempDir dir;
  std::string run_id = "run-tracker-replicas";
  std::string config = test::write_swarm_config(dir.path(), 1000, test::kDiLoCoStrategy);
  Replicas replicas{dir, run_id, config, cluster};
  std::vector<std::unique_ptr<PeerProcess>> owned;
  std::vector<PeerProcess*> peers;

  // False (with the logs in the failure) when no replica leads or the peers never reach round 3.
  bool start(int& leader) {
    leader = replicas.wait_leader();
    if (leader < 0) return false;
    const test::SwarmRun run{.dir = dir.path(),
                             .run_id = run_id,
                             .config = config,
                             .tracker_address = replicas.addresses(),
                             .tracker_key = replicas.public_key()};
    for (int i = 0; i < 3; ++i) {
      owned.push_back(std::make_unique<PeerProcess>(
          run, "peer" + std::to_string(i), std::vector<std::string>{"--debug.step-delay", "20"}));
      peers.push_back(owned.back().get());
    }
    for (PeerProcess* p : peers)
      if (!p->wait_round(3)) return false;
    return true;
  }

  std::string logs() const {
    std::string all = replicas.logs();
    for (std::size_t i = 0; i < peers.size(); ++i)
      all += "--- peer " + std::to_string(i) + "\n" + peers[i]->log();
    return all;
  }

  // No round committed twice or two ways; then a round that every peer committed alike; etcd's
  // state at least at every round a peer committed (saved before it was announced).
  void expect_one_state() {
    EXPECT_TRUE(one_commit_per_round(peers)) << logs();
    const std::uint64_t after = newest_round(peers);
    for (PeerProcess* p : peers) ASSERT_TRUE(p->wait_round(after + 3)) << logs();
    bool one_state = false;
    for (std::uint64_t r = after + 1; r <= after + 3 && !one_state; ++r)
      one_state = test::same_states(peers, r, r);
    EXPECT_TRUE(one_state) << "no round in " << after + 1 << ".." << after + 3
                           << " committed alike by every peer\n"
                           << logs();
    std::uint64_t committed = 0;
    for (PeerProcess* p : peers)
      if (!p->committed().empty()) committed = std::max(committed, p->committed().rbegin()->first);
    EXPECT_GE(replicas.saved_round(), committed) << logs();
    for (PeerProcess* p : peers) EXPECT_EQ(p->process().stop(SIGTERM), 0) << logs();
  }
};

TEST(TrackerReplicas, RoundsGoOnWhenTheLeaderIsKilledAndNoRoundIsCommittedTwice) {
  ReplicaSwarm swarm;
  int leader = -1;
  ASSERT_TRUE(swarm.start(leader)) << swarm.logs();
  for (int kill = 0; kill < 2; ++kill) {
    const auto killed_at = std::chrono::steady_clock::now();
    swarm.replicas.kill(leader);
    if (kill == 1) swarm.cluster.kill_member(0);  // etcd goes on with two of three
    const std::uint64_t at_kill = newest_round(swarm.peers);
    leader = swarm.replicas.wait_leader(leader);
    ASSERT_GE(leader, 0) << swarm.logs();
    // Printed, not asserted (a loaded machine is slow): the kill to a round committed after it.
    ASSERT_TRUE(swarm.peers[0]->wait_until_committed_after(at_kill)) << swarm.logs();
    std::printf(
        "failover %d: %.1f s to the next committed round\n", kill + 1,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count());
    for (PeerProcess* p : swarm.peers) ASSERT_TRUE(p->wait_round(at_kill + 4)) << swarm.logs();
    EXPECT_NE(swarm.replicas.log(leader).find("continuing run " + swarm.run_id + " from etcd key"),
              std::string::npos)
        << swarm.logs();
  }
  swarm.expect_one_state();
}

// A zombie: the leader frozen (SIGSTOP) past its lease while another replica takes over, then
// resumed. It must learn from etcd that it was deposed and stop without announcing anything.
TEST(TrackerReplicas, AFrozenLeaderResumedAfterItsLeaseStopsAndForksNothing) {
  ReplicaSwarm swarm;
  int zombie = -1;
  ASSERT_TRUE(swarm.start(zombie)) << swarm.logs();
  swarm.replicas.signal(zombie, SIGSTOP);
  const std::uint64_t at_freeze = newest_round(swarm.peers);
  const int leader = swarm.replicas.wait_leader(zombie);
  ASSERT_GE(leader, 0) << swarm.logs();
  for (PeerProcess* p : swarm.peers) ASSERT_TRUE(p->wait_round(at_freeze + 3)) << swarm.logs();
  swarm.replicas.signal(zombie, SIGCONT);
  for (PeerProcess* p : swarm.peers) ASSERT_TRUE(p->wait_round(at_freeze + 6)) << swarm.logs();
  const std::string zombie_log = swarm.replicas.log(zombie);
  EXPECT_NE(zombie_log.find("no longer the leading replica"), std::string::npos) << swarm.logs();
  EXPECT_NE(zombie_log.find("waiting to lead again"), std::string::npos) << swarm.logs();
  swarm.expect_one_state();
}

}  // namespace
}  // namespace loco
