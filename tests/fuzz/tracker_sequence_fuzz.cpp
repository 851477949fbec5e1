// Fuzz target: members that lie, in well-formed messages. Six authenticated peers drive a real
// TrackerCore through their own TrackerClients (so every message decodes), and the input picks,
// three bytes an action, who does what: join (with the run's genesis or another, claiming any
// round), say ready with any norm (0, tiny, huge, NaN, negative), report any hash for its group,
// accuse any member or none, report a state of any round, leave, drop its connection, send a
// misbehaviour report or a proof of misconduct (signed by members' keys, valid or not), or let
// time pass. After every action the core must hold its invariants:
// a committed state was reported by more than half of its group as formed (the core logs
// "committed by K of a group of N"), the committed round never goes back, and its timers move on
// (no deadline at or before now after on_timer). Nothing may throw out of the core.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "../proto/tracker_harness.hpp"
#include "fuzz_seeds.hpp"

namespace {

using namespace loco;
using namespace loco::proto;
namespace th = loco::proto::testing;

constexpr std::uint8_t kPeers = 6;
constexpr float kNorms[] = {1.0f,
                            0.0f,
                            1e-9f,
                            1e9f,
                            std::numeric_limits<float>::quiet_NaN(),
                            -1.0f,
                            std::numeric_limits<float>::infinity(),
                            2.0f};

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

// "committed by K of a group of N": K must be more than half of N.
void check_commit(const TrackerEvent& e) {
  if (e.kind != TrackerEvent::Kind::round_committed) return;
  unsigned k = 0, n = 0;
  const auto at = e.text.find("committed by ");
  if (at == std::string::npos ||
      std::sscanf(e.text.c_str() + at, "committed by %u of a group of %u", &k, &n) != 2)
    broken("a commit that does not say its majority: " + e.text);
  if (2 * k <= n) broken(e.text);
}

void act(th::Harness& h, std::uint8_t who, std::uint8_t what, std::uint8_t arg) {
  const std::uint8_t n = static_cast<std::uint8_t>(1 + who % kPeers);
  const bool known = h.peers.contains(n);
  const TrackerSnapshot s = h.tracker->snapshot();
  switch (what % 11) {
    case 0: {  // join, honestly or not
      JoinRequest r = h.join_request(n);
      if (arg & 1) r.genesis = th::digest_of(arg);
      if (arg & 2) r.state_round = arg >> 2;
      if (arg & 4) r.state_hash = th::digest_of(arg);
      h.add(n, r);
      h.connect(n);
      return;
    }
    case 7: h.run_for(std::chrono::milliseconds(100) * (arg + 1)); return;
    default: break;
  }
  if (!known || !h.peers.at(n).connected) return;
  TrackerClient& c = *h.peers.at(n).client;
  const auto group = h.last(n, ClientEvent::Kind::group);
  switch (what % 11) {
    case 1:
      c.ready(Ready{.round = s.committed_round + (arg & 1),
                    .update_norm = kNorms[arg % std::size(kNorms)],
                    .base_hash = (arg & 8) ? th::digest_of(arg) : s.committed_hash});
      break;
    case 2:
      if (group)
        c.round_done(RoundDone{.round = group->group.round,
                               .attempt = group->group.attempt,
                               .state_hash = th::digest_of(arg % 3)});
      break;
    case 3:
      if (group) {
        RoundFailed f{.round = group->group.round,
                      .attempt = group->group.attempt,
                      .reason = "fuzz",
                      .suspect = std::nullopt};
        if (arg % 8 != 0)
          f.suspect = th::key(static_cast<std::uint8_t>(1 + arg % kPeers)).public_key();
        c.round_failed(f);
      }
      break;
    case 4: {
      const std::uint64_t rounds[] = {s.committed_round, s.committed_round + 1, 0,
                                      std::uint64_t{1} << 63};
      c.set_state(rounds[arg % 4], (arg & 4) ? th::digest_of(arg) : s.committed_hash);
      c.state_report();
      break;
    }
    case 5: h.disconnect(n); return;
    case 6: c.leave("fuzz"); break;
    case 8:
      c.report(MisbehaviourReport{
          .suspect = th::key(static_cast<std::uint8_t>(1 + arg % kPeers)).public_key(),
          .reason = "fuzz"});
      break;
    case 9: h.run_for(std::chrono::seconds(arg)); return;
    case 10:
      if (group) {
        // A proof of misconduct (owner_check.hpp) signed by members' keys, valid or not: two
        // statements about one segment of the member's group, by one signer or two.
        const Group& g = group->group;
        const auto signer = [](std::uint64_t v) {
          return th::key(static_cast<std::uint8_t>(1 + v % kPeers));
        };
        const StatementKind kind = (arg & 1) ? StatementKind::result : StatementKind::contribution;
        const auto segment = static_cast<std::uint32_t>((arg >> 1) % (g.members.size() + 1));
        c.proven_misconduct(ProvenMisconduct{
            .proof = {
                .first = sign_statement(signer(arg >> 3), h.config.run_id, g.round, g.attempt, kind,
                                        segment, th::digest_of(1)),
                .second = sign_statement(signer(arg >> 5), h.config.run_id, g.round, g.attempt,
                                         kind, segment, th::digest_of(1 + (arg >> 7) % 2))}});
      }
      break;
    default: break;
  }
  h.pump();
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  // Three join, say ready, report the same hash; then one accuses another again and again.
  return {{0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 1, 1, 0, 2, 1, 0, 0, 2, 0, 1, 2, 0, 2, 2, 0},
          {0, 0, 0, 1, 0, 0, 2, 0, 0, 0,  1, 0, 1, 1, 0, 2, 1, 0, 0, 3,
           1, 0, 9, 3, 0, 3, 2, 7, 7, 30, 0, 3, 2, 1, 3, 2, 7, 7, 30}};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  th::Harness h;
  h.config.min_peers = 1;
  h.start();
  std::uint64_t committed = 0;
  std::size_t seen = 0;
  for (std::size_t i = 0; i + 3 <= size && i < 3 * 400; i += 3) {
    act(h, data[i], data[i + 1], data[i + 2]);
    for (; seen < h.tracker_events.size(); ++seen) check_commit(h.tracker_events[seen].second);
    const std::uint64_t now_committed = h.tracker->snapshot().committed_round;
    bool went_back = false;
    for (std::size_t e = 0; e < h.tracker_events.size(); ++e)
      went_back = went_back ||
                  h.tracker_events[e].second.text.find("the run goes on from") != std::string::npos;
    if (now_committed < committed && !went_back) broken("the committed round went back");
    committed = now_committed;
    if (h.tracker->poll_timeout() <= h.now) broken("a deadline at or before now after on_timer");
  }
  return 0;
}
