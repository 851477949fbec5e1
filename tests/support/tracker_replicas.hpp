#pragma once
// Tracker replicas over a real etcd (etcd_cluster.hpp) for a test or a benchmark (issue 47): three
// loco-tracker processes on loopback sharing one key and one run, and what a caller checks of the
// peers under them (no round committed twice or two ways). No GoogleTest here: bench/ uses it too.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "etcd_cluster.hpp"
#include "http_client.hpp"
#include "loco/proto/tracker_snapshot.hpp"
#include "loco/replica/election.hpp"
#include "peer_process.hpp"
#include "temp_dir.hpp"
#include "tracker_process.hpp"

namespace loco::test {

inline constexpr int kReplicas = 3;

class Replicas {
 public:
  // `lease`: --tracker.etcd-lease (each etcd call's timeout is a third of it).
  Replicas(const TempDir& dir, const std::string& run_id, const std::string& config,
           const EtcdCluster& cluster, const std::string& lease = "2s")
      : dir_(dir.path()), run_id_(run_id), client_(cluster.client_options()) {
    const auto key = secure::KeyPair::generate();
    secure::write_key_file(dir_ / "tracker.key", key, false);
    public_key_ = secure::to_hex(key.public_key());
    std::string etcd;
    for (const auto& member : cluster.endpoints())
      etcd += (etcd.empty() ? "http://" : ",http://") + member.host + ":" + member.port;
    for (int i = 0; i < kReplicas; ++i) {
      const std::string listen = "127.0.0.1:" + std::to_string(free_loopback_port());
      addresses_ += (i ? "," : "") + listen;
      const std::string name = "r" + std::to_string(i);
      std::vector<std::string> argv = {program("loco-tracker"),
                                       "--tracker.key",
                                       (dir_ / "tracker.key").string(),
                                       "--tracker.listen",
                                       listen,
                                       "--tracker.state-file",
                                       (dir_ / (name + ".state")).string(),
                                       "--tracker.etcd",
                                       etcd,
                                       "--tracker.replica",
                                       name,
                                       "--tracker.etcd-lease",
                                       lease,
                                       "--tracker.http",
                                       "127.0.0.1:0",  // each term's leader: a port of its own
                                       "--run.id",
                                       run_id,
                                       "--run.config",
                                       config,
                                       "--admission.policy",
                                       "open",
                                       "--tracker.max-members-per-address",
                                       "0"};
      argv.insert(argv.end(), kSwarmTimers.begin(), kSwarmTimers.end());
      argvs_.push_back(argv);
      logs_.push_back(dir_ / (name + ".log"));
      processes_.push_back(std::make_unique<ChildProcess>(argv, logs_.back()));
    }
  }

  // The replica that leads now, once one does that is not `other`; -1 after a hang guard of 60 s.
  int wait_leader(int other = -1) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      try {
        if (const auto leader =
                replica::Election::observe(client_, "/loco/" + run_id_ + "/leader/")) {
          const std::string& name = leader->value;  // "r0" .. "r2"
          const int i = name.back() - '0';
          if (name.size() == 2 && name.front() == 'r' && i >= 0 && i < kReplicas && i != other)
            return i;
        }
      } catch (const Error&) {
        // an etcd member down: the next try goes to another
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }

  // True once replica `i` serves in its current life: it loaded the run's state from etcd and
  // listens (its status page opens once its listener does); false after a hang guard of 60 s.
  bool wait_serving(int i) const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (log(i).find("status page at http://") == std::string::npos) {
      if (std::chrono::steady_clock::now() >= give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling, not a deadline
    }
    return true;
  }

  // SIGKILLs replica `i`; -1 (killed by the signal) unless it had already exited.
  int kill(int i) { return processes_.at(i)->stop(SIGKILL); }
  // True when `signal` was delivered to replica `i`.
  bool signal(int i, int signal) { return ::kill(processes_.at(i)->pid(), signal) == 0; }
  // Starts replica `i` again with its options and address (after kill); the log of its previous
  // life is kept beside the new one.
  void restart(int i) {
    processes_.at(i).reset();
    const auto& log = logs_.at(i);
    std::filesystem::rename(log, log.string() + "." + std::to_string(++lives_[i]));
    processes_.at(i) = std::make_unique<ChildProcess>(argvs_.at(i), log);
  }

  // The state the leaders saved in etcd, as its bytes ("": none yet).
  std::string saved_state() {
    const auto found = client_.range(replica::one_key("/loco/" + run_id_ + "/state"));
    return found.kvs.empty() ? std::string() : found.kvs.front().value;
  }
  // The state the leaders saved in etcd, decoded (a new run's, empty, when there is none yet).
  proto::TrackerSnapshot saved_snapshot() {
    const std::string value = saved_state();
    if (value.empty()) return {};
    const auto* first = reinterpret_cast<const std::byte*>(value.data());
    return proto::decode_snapshot(std::vector<std::byte>(first, first + value.size()), "etcd");
  }
  // The committed round of the state the leaders saved in etcd.
  std::uint64_t saved_round() { return saved_snapshot().committed_round; }

  // The commit log the leaders wrote in etcd (replica/commit_log.hpp), in key order: round order.
  std::vector<replica::KeyValue> commit_log() {
    const std::string prefix = "/loco/" + run_id_ + "/rounds/";
    return client_.range({prefix, replica::prefix_end(prefix), 0, false}).kvs;
  }

  // Replica `i`'s /status body, from the status page its latest term opened ("": none, or it
  // did not answer).
  std::string status(int i) const {
    const std::string text = log(i);
    const std::string prefix = "status page at http://";
    const auto at = text.rfind(prefix);
    if (at == std::string::npos) return "";
    const auto begin = at + prefix.size();
    try {
      TestClient client(endpoint_of(text.substr(begin, text.find('/', begin) - begin)));
      const auto reply = client.get("/status");
      return reply.error ? std::string() : reply.response.body();
    } catch (const std::exception&) {
      return "";  // its term ended: nothing listens there
    }
  }

  const std::string& addresses() const { return addresses_; }
  const std::string& public_key() const { return public_key_; }
  std::string log(int i) const { return read_text(logs_.at(i)); }
  std::string logs() const {
    std::string all;
    for (std::size_t i = 0; i < logs_.size(); ++i)
      all += "--- replica r" + std::to_string(i) + "\n" + read_text(logs_[i]);
    return all;
  }

 private:
  std::filesystem::path dir_;
  std::string run_id_;
  etcd::EtcdClient client_;
  std::string public_key_;
  std::string addresses_;
  std::vector<std::vector<std::string>> argvs_;
  std::vector<std::filesystem::path> logs_;
  std::map<int, int> lives_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;
};

// What the peers' round lines show against one commit per round: a peer that committed a round
// twice, and a round two peers committed with different states (a fork).
struct CommitCheck {
  int double_commits = 0;
  int forks = 0;
  std::string first_problem;  // "" when both are 0
};

inline CommitCheck check_commits(const std::vector<PeerProcess*>& peers) {
  CommitCheck check;
  std::map<std::uint64_t, std::string> states;
  std::map<std::uint64_t, bool> forked;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    std::map<std::uint64_t, int> times;
    for (const RoundLine& r : peers[i]->rounds()) {
      if (r.kind != "committed") continue;
      const std::string peer = "peer " + std::to_string(i);
      if (++times[r.round] == 2) {
        ++check.double_commits;
        if (check.first_problem.empty())
          check.first_problem = peer + " committed round " + std::to_string(r.round) + " twice";
      }
      const auto [it, first] = states.emplace(r.round, r.state);
      if (!first && it->second != r.state && !forked[r.round]) {
        forked[r.round] = true;
        ++check.forks;
        if (check.first_problem.empty())
          check.first_problem = "round " + std::to_string(r.round) + ": " + peer + " holds " +
                                r.state + ", another " + it->second;
      }
    }
  }
  return check;
}

// What the commit log in etcd (Replicas::commit_log) shows against "every round once, in order":
// its keys must be rounds 1 to `saved` (the state's round), each key written once (version 1).
struct LogCheck {
  std::size_t entries = 0;
  int problems = 0;           // a key out of place (a gap, a round past the state's) or rewritten
  std::string first_problem;  // "" when there is none
};

inline LogCheck check_commit_log(const std::vector<replica::KeyValue>& log, std::uint64_t saved) {
  LogCheck check{.entries = log.size(), .problems = 0, .first_problem = {}};
  const auto problem = [&](std::string what) {
    if (check.problems++ == 0) check.first_problem = std::move(what);
  };
  if (log.size() != saved)
    problem(std::to_string(log.size()) + " keys in the commit log, for rounds 1 to " +
            std::to_string(saved));
  for (std::size_t i = 0; i < log.size(); ++i) {
    const std::string& key = log[i].key;  // .../rounds/<round, 20 digits>
    const std::string digits = key.size() < 20 ? key : key.substr(key.size() - 20);
    if (digits.find_first_not_of("0123456789") != std::string::npos || std::stoull(digits) != i + 1)
      problem("commit log key " + std::to_string(i) + " is " + key + ", not round " +
              std::to_string(i + 1));
    if (log[i].version != 1)
      problem(key + " was written " + std::to_string(log[i].version) + " times");
  }
  return check;
}

// The newest round any peer has a line for (so far read).
inline std::uint64_t newest_round(const std::vector<PeerProcess*>& peers) {
  std::uint64_t newest = 0;
  for (PeerProcess* p : peers)
    if (!p->rounds().empty()) newest = std::max(newest, p->rounds().back().round);
  return newest;
}

// The newest round any peer committed (so far read).
inline std::uint64_t newest_committed(const std::vector<PeerProcess*>& peers) {
  std::uint64_t committed = 0;
  for (PeerProcess* p : peers)
    if (!p->committed().empty()) committed = std::max(committed, p->committed().rbegin()->first);
  return committed;
}

}  // namespace loco::test
