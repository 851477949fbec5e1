// Tracker replicas in the simulator (sim/replica_node.hpp over sim/store_model.hpp): three
// replicas of one run, four peers walking their addresses, and a seeded schedule of what the
// real-process test (tests/programs/tracker_replicas_test.cpp) does with processes: the leader
// SIGKILLed every ~15 s and restarted, once SIGSTOPped past its lease and resumed (a zombie),
// the store unreachable for a while (etcd without a majority) and one replica cut from it, and
// three times a leader's commit written in the store with its answer lost, so that it is never
// announced (the window a SIGKILL between etcd's write and the commit on the wire hits). The
// invariants of the SimFaults tests hold (ledger.hpp: no round installed twice or two ways, the
// tracker never commits a round twice), every peer ends with the same state, which is the state
// in the store, the store's commit log holds every round once and in order, each at the state the
// peers installed for it, no round is lost (every peer stays live and holds the unannounced
// round as its tentative state: the next leader has it committed), and the same seed gives the
// same trace. LOCO_SIM_SEEDS=N runs more seeds,
// LOCO_SIM_SEED=S replays one.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/replica/commit_log.hpp"
#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::size_t kReplicas = 3;
constexpr Duration kFaultPhase = std::chrono::minutes(4);
constexpr Duration kQuiet = std::chrono::minutes(3);

SwarmConfig replica_swarm(std::uint64_t seed) {
  SwarmConfig c = test::instant_swarm(seed, 4);
  c.links.latency_min = milliseconds(5);
  c.links.latency_max = milliseconds(40);
  c.check_holding = false;  // it reads one tracker's disk
  c.replicas = kReplicas;
  c.replica_lease = seconds(3);
  return c;
}

// The replica that leads now with the newest term (a zombie may still think it leads), not a
// stopped one (the zombie is left to resume).
std::optional<std::size_t> leader(Swarm& swarm) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < swarm.replica_count(); ++i)
    if (swarm.replica(i).leading() && !swarm.replica(i).paused() &&
        (!found || swarm.replica(i).term() > swarm.replica(*found).term()))
      found = i;
  return found;
}

struct Faults {
  std::vector<TimePoint> kills;
  std::vector<TimePoint> commits;          // when the leader committed each round
  bool pause_armed = false;                // pause the leader when it next forms a round
  std::optional<std::size_t> paused;       // the zombie
  std::uint64_t refused_before_pause = 0;  // the zombie's refused saves before its pause
  bool lose_armed = false;  // lose the answer of the leader's next write when it forms a round
  std::optional<std::size_t> losing;  // the replica whose next write's answer is lost
};

// The leader killed every 10-20 s and restarted 3-15 s later; from 100 s the leader paused for
// three leases as soon as it forms a round (its members' reports queue while it is stopped, so on
// resume it commits the round: the fence must refuse that save); at 160 s the store down for 5 s;
// at 200 s one replica cut from it for 8 s.
void schedule_faults(Swarm& swarm, std::uint64_t seed, Faults& faults) {
  Rng rng(counter_u64(seed, 0x7265706cULL, 0));  // "repl"
  EventLoop& loop = swarm.loop();
  for (TimePoint t = TimePoint(seconds(20)); t < TimePoint(kFaultPhase);
       t += milliseconds(10'000 + rng.below(10'000))) {
    const Duration down = milliseconds(3'000 + rng.below(12'000));
    loop.at(t, [&swarm, &faults, down] {
      const auto i = leader(swarm);
      if (!i) return;
      if (faults.losing == i) swarm.store().lose_next_answer(*i, false);  // a new process
      swarm.replica(*i).crash();
      faults.kills.push_back(swarm.loop().now());
      swarm.loop().after(down, [&swarm, i] {
        if (!swarm.replica(*i).up()) swarm.replica(*i).start();
      });
    });
  }
  swarm.watch_tracker([&swarm, &faults](const proto::TrackerEvent& e) {
    using Kind = proto::TrackerEvent::Kind;
    if (e.kind == Kind::round_committed) faults.commits.push_back(swarm.loop().now());
    if (e.kind != Kind::round_formed) return;
    if (faults.lose_armed) {  // its next write is this round's commit
      faults.lose_armed = false;
      faults.losing = leader(swarm);
      if (faults.losing) swarm.store().lose_next_answer(*faults.losing);
    }
    if (!faults.pause_armed) return;
    faults.pause_armed = false;
    faults.paused = leader(swarm);
    if (!faults.paused) return;
    faults.refused_before_pause = swarm.replica(*faults.paused).saves_refused();
    swarm.replica(*faults.paused).pause(seconds(9));
  });
  for (const int at : {40, 130, 225})
    loop.at(TimePoint(seconds(at)), [&faults] { faults.lose_armed = true; });
  loop.at(TimePoint(seconds(100)), [&faults] { faults.pause_armed = true; });
  loop.at(TimePoint(seconds(160)), [&swarm] { swarm.store().set_down(true); });
  loop.at(TimePoint(seconds(165)), [&swarm] { swarm.store().set_down(false); });
  const std::size_t cut = rng.below(kReplicas);
  loop.at(TimePoint(seconds(200)), [&swarm, cut] { swarm.store().set_cut(cut, true); });
  loop.at(TimePoint(seconds(208)), [&swarm, cut] { swarm.store().set_cut(cut, false); });
  loop.at(TimePoint(kFaultPhase), [&swarm] {
    for (std::size_t i = 0; i < swarm.replica_count(); ++i)
      if (!swarm.replica(i).up()) swarm.replica(i).start();
  });
}

// The store's commit log against "every round once, in order, up to the state's round", and each
// entry's state against the one the peers installed for its round (the Ledger holds every
// installer of a round to one hash, so this is every peer that committed it). `unmatched` counts
// the entries no peer installed (their round only fetched by the peers, or reached by none).
std::string check_commit_log(Swarm& swarm, const proto::TrackerSnapshot& state,
                             std::uint64_t& unmatched) {
  const std::string prefix = replica::commit_log_prefix("/loco/sim/");
  const auto log = swarm.store().peek({.key = prefix, .range_end = replica::prefix_end(prefix)});
  std::string out;
  std::uint64_t expected = 1;
  for (const replica::KeyValue& kv : log.kvs) {
    const replica::CommitLogEntry entry = replica::decode_commit_entry(kv.value);
    const std::string round = std::to_string(entry.round);
    if (entry.round != expected)
      out += "  the log has round " + round + " where " + std::to_string(expected) + " was due\n";
    if (kv.version != 1)
      out += "  round " + round + " was logged " + std::to_string(kv.version) + " times\n";
    const std::optional<Digest> installed = swarm.ledger().installed_hash(entry.round);
    if (!installed)
      ++unmatched;
    else if (*installed != entry.state_hash)
      out += "  the log has round " + round + " at state " +
             to_hex(entry.state_hash).substr(0, 12) + ", the peers installed " +
             to_hex(*installed).substr(0, 12) + "\n";
    expected = entry.round + 1;
  }
  if (expected != state.committed_round + 1)
    out += "  the log ends at round " + std::to_string(expected - 1) + ", the state is at " +
           std::to_string(state.committed_round) + "\n";
  return out;
}

struct Outcome {
  std::uint64_t trace = 0;
  std::uint64_t rounds = 0;
  std::uint64_t terms = 0;
  std::uint64_t refused = 0;       // saves the fence refused
  std::uint64_t unmatched = 0;     // log entries no peer installed (check_commit_log)
  std::uint64_t answers_lost = 0;  // writes that landed unanswered
  std::vector<double> failover_s;  // from each kill to the next round committed
  std::string failure;
};

std::vector<double> failovers(const Faults& faults) {
  std::vector<double> out;
  for (const TimePoint kill : faults.kills) {
    const auto next = std::upper_bound(faults.commits.begin(), faults.commits.end(), kill);
    if (next != faults.commits.end())
      out.push_back(std::chrono::duration<double>(*next - kill).count());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Outcome run_schedule(std::uint64_t seed) {
  Swarm swarm(replica_swarm(seed));
  Faults faults;
  schedule_faults(swarm, seed, faults);
  swarm.start();
  Outcome out;
  if (!swarm.run_until(TimePoint(kFaultPhase + kQuiet), 20'000'000))
    out.failure = "  the event budget ran out (a livelock?)\n";
  out.failure += test::violations(swarm);
  for (std::size_t i = 0; i < kReplicas; ++i) {
    out.terms += swarm.replica(i).terms();
    out.refused += swarm.replica(i).saves_refused();
  }
  // The zombie resumed into the round it had formed, and the fence refused its commit.
  if (!faults.paused)
    out.failure += "  no leader to pause after 100 s\n";
  else if (swarm.replica(*faults.paused).saves_refused() == faults.refused_before_pause)
    out.failure += "  the paused leader's commit was not refused\n";
  if (swarm.store().answers_lost() == 0) out.failure += "  no write's answer was lost\n";
  if (out.terms < faults.kills.size() + 1)
    out.failure += "  " + std::to_string(out.terms) + " terms for " +
                   std::to_string(faults.kills.size()) + " kills\n";
  out.failover_s = failovers(faults);
  if (out.failover_s.size() != faults.kills.size())
    out.failure += "  a kill was not followed by a committed round\n";
  // Every peer holds the same state, the one the store holds.
  const auto saved = swarm.store().peek(replica::one_key("/loco/sim/state"));
  if (saved.kvs.empty()) {
    out.failure += "  no state in the store\n";
    return out;
  }
  const std::string& bytes = saved.kvs[0].value;
  const proto::TrackerSnapshot state = proto::decode_snapshot(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "the store's state");
  for (const auto& [i, s] : test::live_states(swarm))
    if (s != std::pair{state.committed_round, state.committed_hash})
      out.failure += "  peer " + std::to_string(i) + " holds round " + std::to_string(s.first) +
                     ", the store's state is at " + std::to_string(state.committed_round) + "\n";
  out.failure += check_commit_log(swarm, state, out.unmatched);
  for (const proto::LostRounds& lost : state.lost_rounds)
    out.failure += "  rounds " + std::to_string(lost.first) + " to " + std::to_string(lost.last) +
                   " were lost (the run went back to round " + std::to_string(lost.went_back_to) +
                   ")\n";
  out.answers_lost = swarm.store().answers_lost();
  out.rounds = state.committed_round;
  if (out.rounds < 20) out.failure += "  only " + std::to_string(out.rounds) + " rounds\n";
  out.trace = swarm.loop().trace_hash();
  return out;
}

TEST(SimReplicas, FailoversKeepEveryInvariantAndTheCommitLog) {
  for (const std::uint64_t seed : test::seeds(4701, 2)) {
    test::print_seed(seed);
    const Outcome out = run_schedule(seed);
    const std::vector<double>& f = out.failover_s;
    std::printf(
        "[ SIM SEED ] %llu: %llu rounds, %zu kills, failover %.2f s median %.2f s max, %llu terms, "
        "%llu saves refused, %llu answers lost, %llu logged rounds no peer installed, trace "
        "%016llx\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(out.rounds),
        f.size(), f.empty() ? 0.0 : f[f.size() / 2], f.empty() ? 0.0 : f.back(),
        static_cast<unsigned long long>(out.terms), static_cast<unsigned long long>(out.refused),
        static_cast<unsigned long long>(out.answers_lost),
        static_cast<unsigned long long>(out.unmatched), static_cast<unsigned long long>(out.trace));
    EXPECT_TRUE(out.failure.empty())
        << out.failure
        << test::replay_hint(seed, "SimReplicas.FailoversKeepEveryInvariantAndTheCommitLog");
  }
}

TEST(SimReplicas, TheSameSeedReplaysTheSameTrace) {
  const std::uint64_t seed = test::seeds(4711, 1).front();
  EXPECT_EQ(run_schedule(seed).trace, run_schedule(seed).trace);
}

}  // namespace
}  // namespace loco::sim
