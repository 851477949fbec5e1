// Tracker failover under repeated kills (issue 47): a 3-member etcd on loopback, three loco-tracker
// replicas sharing the run (tests/support/tracker_replicas.hpp, the replica test's harness) and
// four loco-peer training the tiny GPT of tests/support/peer_process.hpp (H = 4, 50 ms steps).
// Every --every-s seconds the leading replica is SIGKILLed; the bench waits for another replica to
// lead, times the kill to the first round a peer commits past the round the dead leader had saved
// in etcd (so a round run under the new leader), lets every peer go on, and starts the killed
// replica again. One line per kill on stdout, then, as its last line:
//   tracker-failover: lease_s=S kills=N median_s=... max_s=... rounds=... rounds_lost=0
//   tentative_commits=... forks=0 double_commits=0 log_rounds=... log_problems=0
// rounds: rounds committed from the first kill to the end; rounds_lost: rounds committed and then
// lost (no live peer held them when a new leader took over: the state's lost rounds, newest 16),
// which the run committed again and the log holds as rewritten keys; tentative_commits: members a
// new leader told to commit the round they held as their tentative state (a leader killed after
// etcd took that round's commit and before it sent it: the kills that hit that window, counted in
// the replicas' logs); forks: rounds two peers
// committed with different states; double_commits: a round one peer committed twice; log_rounds:
// the keys of the commit log in etcd once the peers stopped; log_problems: a round missing from it
// or out of place, or a key written twice (tests/support/tracker_replicas.hpp, check_commit_log).
// If a part did not run (no leader, peers stuck, etcd behind a committed round) its figures are
// "nan", why goes to stderr with the processes' logs, and the exit status is 1; so is it with a
// fork, a double commit or a log problem. Options: --kills N (default 10) --every-s S (default 15)
// --lease S (the replicas' etcd lease in whole seconds, default 3: issue 47's goal is a median
// failover of 5 s at most with a 3 s lease).

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../tests/support/etcd_cluster.hpp"
#include "../tests/support/peer_process.hpp"
#include "../tests/support/temp_dir.hpp"
#include "../tests/support/tracker_replicas.hpp"

namespace {

using namespace loco;
using Clock = std::chrono::steady_clock;

struct Options {
  int kills = 10;
  double every_s = 15;
  int lease_s = 3;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--kills") == 0) {
      o.kills = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--every-s") == 0) {
      o.every_s = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--lease") == 0 && std::atoi(argv[i + 1]) >= 1) {
      o.lease_s = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr,
                   "usage: bench-tracker-failover [--kills N] [--every-s S] [--lease S (>= 1)]\n");
      std::exit(2);
    }
  }
  return o;
}

struct Swarm {
  explicit Swarm(int lease_s)
      : replicas(dir, run_id, config, cluster, std::to_string(lease_s) + "s") {}

  test::EtcdCluster cluster{3};
  test::TempDir dir;
  std::string run_id = "run-tracker-failover";
  std::string config = test::write_swarm_config(dir.path(), 1'000'000);
  test::Replicas replicas;
  std::vector<std::unique_ptr<test::PeerProcess>> owned;
  std::vector<test::PeerProcess*> peers;

  std::string logs() const {
    std::string all = replicas.logs();
    for (std::size_t i = 0; i < peers.size(); ++i)
      all += "--- peer " + std::to_string(i) + "\n" + peers[i]->log();
    return all;
  }
};

struct Figures {
  std::vector<double> failover_s;  // one per kill
  std::uint64_t rounds = 0;
  std::uint64_t rounds_lost = 0;  // the saved state's lost rounds
  std::uint64_t tentative_commits = 0;
  test::CommitCheck commits;
  test::LogCheck log;
};

// Starts four peers and waits for them past round 3; the leader, or throws.
int start(Swarm& s) {
  const int leader = s.replicas.wait_leader();
  if (leader < 0) throw std::runtime_error("no replica took the lead");
  const test::SwarmRun run{.dir = s.dir.path(),
                           .run_id = s.run_id,
                           .config = s.config,
                           .tracker_address = s.replicas.addresses(),
                           .tracker_key = s.replicas.public_key()};
  for (int i = 0; i < 4; ++i) {
    s.owned.push_back(std::make_unique<test::PeerProcess>(
        run, "peer" + std::to_string(i), std::vector<std::string>{"--debug.step-delay", "50"}));
    s.peers.push_back(s.owned.back().get());
  }
  for (test::PeerProcess* p : s.peers)
    if (!p->wait_round(3)) throw std::runtime_error("the peers never reached round 3");
  return leader;
}

// The lines of every replica's logs (each life's: r0.log, r0.log.1, ...) that say a member was
// told to commit its tentative state (proto::TrackerCore::commit_tentative).
std::uint64_t tentative_commits(const Swarm& s) {
  std::uint64_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(s.dir.path())) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 2 || name[0] != 'r' || name.find(".log") == std::string::npos) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);)
      n += line.find("as its tentative state") != std::string::npos;
  }
  return n;
}

// Kills `leader`, waits for the next one and a round committed under it; the seconds it took.
double kill_once(Swarm& s, int& leader) {
  const auto killed_at = Clock::now();
  if (s.replicas.kill(leader) != -1) throw std::runtime_error("the leader had already exited");
  // The dead leader can write no more and no other leads yet (its lease runs on): every round a
  // peer committed before the kill is at most this one.
  const std::uint64_t saved = s.replicas.saved_round();
  const int killed = leader;
  leader = s.replicas.wait_leader(killed);
  if (leader < 0) throw std::runtime_error("no replica took over");
  if (!s.peers[0]->wait_until_committed_after(saved))
    throw std::runtime_error("no round committed after the kill");
  const double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
  for (test::PeerProcess* p : s.peers)
    if (!p->wait_round(saved + 2)) throw std::runtime_error("a peer stopped after the kill");
  s.replicas.restart(killed);
  return seconds;
}

Figures run(Swarm& s, const Options& o) {
  Figures f;
  int leader = start(s);
  const std::uint64_t before = test::newest_committed(s.peers);
  auto next_kill = Clock::now();
  for (int k = 0; k < o.kills; ++k) {
    std::this_thread::sleep_until(next_kill);
    next_kill = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(o.every_s));
    f.failover_s.push_back(kill_once(s, leader));
    std::printf("kill %d: %.2f s to a round committed under the next leader (r%d)\n", k + 1,
                f.failover_s.back(), leader);
    std::fflush(stdout);
  }
  // Everyone past the newest round seen, so the checks below see every peer's rounds so far.
  const std::uint64_t last = test::newest_round(s.peers);
  for (test::PeerProcess* p : s.peers)
    if (!p->wait_round(last + 2)) throw std::runtime_error("a peer stopped after the last kill");
  f.rounds = test::newest_committed(s.peers) - before;
  f.commits = test::check_commits(s.peers);
  if (s.replicas.saved_round() < test::newest_committed(s.peers))
    throw std::runtime_error("etcd's state is behind a round a peer committed");
  for (test::PeerProcess* p : s.peers) p->process().stop(SIGTERM);
  // The peers stopped, no round can commit: the log must hold every round of the state's.
  const proto::TrackerSnapshot saved = s.replicas.saved_snapshot();
  f.log = test::check_commit_log(s.replicas.commit_log(), saved.committed_round);
  for (const proto::LostRounds& lost : saved.lost_rounds)
    f.rounds_lost += lost.last - lost.first + 1;
  f.tentative_commits = tentative_commits(s);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::unique_ptr<Swarm> swarm;
  try {
    swarm = std::make_unique<Swarm>(o.lease_s);
    Figures f = run(*swarm, o);
    std::vector<double> sorted = f.failover_s;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n == 0 ? 0 : (sorted[(n - 1) / 2] + sorted[n / 2]) / 2;
    std::printf(
        "tracker-failover: lease_s=%d kills=%zu median_s=%.2f max_s=%.2f rounds=%llu "
        "rounds_lost=%llu "
        "tentative_commits=%llu forks=%d double_commits=%d log_rounds=%zu log_problems=%d\n",
        o.lease_s, n, median, n == 0 ? 0 : sorted.back(), static_cast<unsigned long long>(f.rounds),
        static_cast<unsigned long long>(f.rounds_lost),
        static_cast<unsigned long long>(f.tentative_commits), f.commits.forks,
        f.commits.double_commits, f.log.entries, f.log.problems);
    bool failed = false;
    for (const std::string& problem : {f.commits.first_problem, f.log.first_problem})
      if (!problem.empty()) {
        std::fprintf(stderr, "tracker-failover: %s\n", problem.c_str());
        failed = true;
      }
    if (failed) return 1;
    return n > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tracker-failover: %s\n%s", e.what(), swarm ? swarm->logs().c_str() : "");
    std::printf(
        "tracker-failover: lease_s=%d kills=nan median_s=nan max_s=nan rounds=nan rounds_lost=nan "
        "tentative_commits=nan forks=nan double_commits=nan log_rounds=nan log_problems=nan\n",
        o.lease_s);
    return 1;
  }
}
