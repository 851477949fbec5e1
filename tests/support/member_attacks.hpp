#pragma once
// A loco-member-attacker process (tests/tools/loco_member_attacker.cpp) beside a LocalSwarm, and
// what the member-attack tests ask of the honest peers once an attack is over
// (tests/programs/member_attack_test.cpp, run_liveness_test.cpp).

#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "local_swarm.hpp"

namespace loco::test {

// Rounds of 4 x 100 ms: the attacker joins a run under way, and a round's protocol, not its
// compute, is what the test waits on.
inline const std::vector<std::string> kHonest = {"--debug.step-delay", "100"};
// The hash the accuser and the poisoner report for a round (32 bytes of 0x42), as peers print it.
inline const std::string kLiarsHash = "4242424242";
// More than a few hundred lines of a test's run, far less than a line per message of a flood.
inline constexpr std::uintmax_t kLogBound = 200 * 1024;

// A loco-member-attacker of `swarm` (run `run_id`) with its own key, doing `attack`.
class Attacker {
 public:
  Attacker(LocalSwarm& swarm, const std::string& run_id, const std::string& attack,
           const std::vector<std::string>& extra = {}, const std::string& name = "attacker")
      : log_(swarm.dir() / (name + ".log")) {
    const auto key = swarm.dir() / (name + ".key");
    secure::write_key_file(key, secure::KeyPair::generate(), false);
    std::vector<std::string> argv = {program("loco-member-attacker"),
                                     "--key",
                                     key.string(),
                                     "--tracker",
                                     swarm.tracker().address(),
                                     "--tracker-key",
                                     swarm.tracker().public_key(),
                                     "--run-id",
                                     run_id,
                                     "--run-config",
                                     (swarm.dir() / "swarm.toml").string(),
                                     "--attack",
                                     attack};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv, log_);
  }

  // Reads lines until one starts with `prefix` and returns it; "" once the output ends or the
  // guard runs out.
  std::string wait_for(const std::string& prefix) {
    for (;;) {
      const std::string line = process_->read_line(kLinePatienceMs);
      if (line.empty()) return "";
      lines_ += line + "\n";
      if (line.starts_with(prefix)) return line;
    }
  }
  const std::string& lines() const { return lines_; }
  std::string log() const { return read_text(log_); }
  ChildProcess& process() { return *process_; }

 private:
  std::filesystem::path log_;
  std::unique_ptr<ChildProcess> process_;
  std::string lines_;
};

// Whether the tracker told `attacker` that it sits out the run's next round attempts (it was
// benched), in a line read already or within its next `aborts` aborts (false too once its output
// ended). The attacker's own line, not the tracker's: the tracker logs a peer's notices four
// times per 10 s (docs/TRACKER.md, "Cut off means cut off"), and a member that just joined and
// caught up may have used them. A count of aborts, not a time: how many come first is the
// protocol's to say.
inline bool wait_for_bench(Attacker& attacker, int aborts = 40) {
  const std::string told = "sits out the run's next";
  if (attacker.lines().find(told) != std::string::npos) return true;
  for (int i = 0; i < aborts; ++i) {
    const std::string line = attacker.wait_for("aborted ");
    if (line.empty()) return false;
    if (line.find(told) != std::string::npos) return true;
  }
  return false;
}

inline std::vector<PeerProcess*> start_honest(LocalSwarm& swarm, int count = 3) {
  std::vector<PeerProcess*> honest;
  for (int i = 0; i < count; ++i)
    honest.push_back(&swarm.add_peer("peer" + std::to_string(i), kHonest));
  return honest;
}

// The newest round any of `peers` printed.
inline std::uint64_t newest_round(const std::vector<PeerProcess*>& peers) {
  std::uint64_t newest = 0;
  for (PeerProcess* p : peers)
    if (!p->rounds().empty()) newest = std::max(newest, p->rounds().back().round);
  return newest;
}

// Waits round by round (20 at most) until the tracker's log says `text`: an attacker may join a
// round or two late.
inline void wait_for_tracker_line(LocalSwarm& swarm, const std::vector<PeerProcess*>& honest,
                                  const std::string& text) {
  std::uint64_t round = newest_round(honest) + 1;
  for (const std::uint64_t last = round + 20;
       round < last && swarm.tracker().log().find(text) == std::string::npos; ++round)
    for (PeerProcess* p : honest) ASSERT_TRUE(p->wait_round(round)) << swarm.logs();
  EXPECT_NE(swarm.tracker().log().find(text), std::string::npos) << swarm.logs();
}

// Every round `honest` committed had `members` members (the attacker left out).
inline void expect_committed_by(LocalSwarm& swarm, const std::vector<PeerProcess*>& honest,
                                std::size_t members) {
  for (PeerProcess* p : honest)
    for (const RoundLine& r : p->rounds())
      if (r.kind == "committed") {
        EXPECT_EQ(r.members, members) << "round " << r.round << "\n" << swarm.logs();
      }
}

// What every test asks of the honest peers once the attack is over: they went on `more` rounds
// past where they were, hold one state over every round from `from`, with finite losses, and the
// tracker never committed a state that a minority or the attacker reported.
inline void expect_the_run_went_on(LocalSwarm& swarm, const std::vector<PeerProcess*>& honest,
                                   std::uint64_t more, std::uint64_t from = 1) {
  const std::uint64_t until = newest_round(honest) + more;
  for (PeerProcess* p : honest) ASSERT_TRUE(p->wait_round(until)) << swarm.logs();
  EXPECT_TRUE(same_states(honest, from, until)) << swarm.logs();
  for (PeerProcess* p : honest)
    for (const RoundLine& r : p->rounds()) {
      EXPECT_TRUE(std::isfinite(r.loss)) << "round " << r.round;
      EXPECT_FALSE(r.state.starts_with(kLiarsHash)) << "round " << r.round << "\n" << swarm.logs();
    }
  const std::string log = swarm.tracker().log();
  EXPECT_EQ(log.find("committed by 1 of"), std::string::npos) << log;
  EXPECT_EQ(log.find("state " + kLiarsHash), std::string::npos) << log;
  for (PeerProcess* p : honest) EXPECT_TRUE(p->process().running()) << swarm.logs();
}

inline void stop_all(const std::vector<PeerProcess*>& honest) {
  for (PeerProcess* p : honest) EXPECT_EQ(p->process().stop(SIGTERM), 0);
}

}  // namespace loco::test
