// Fuzz target: two members that lie, in well-formed messages, to honest PeerCores. Four honest
// peers and two liars (peers 5 and 6) run rounds with a real TrackerCore (testing::Net, virtual
// time). Each liar's own core runs the protocol, and every message it sends is held; the input then
// picks, three bytes an action, what happens: an honest peer (or a liar) says ready, a held message
// of a liar is delivered as it was, with a value changed (the fp32 codec's payloads: NaN, infinity,
// huge, negated), with a byte flipped, cut short, twice, to another member, as another message
// type, or not at all; time passes; an honest peer is killed and comes back with the genesis (a
// newcomer that fetches, possibly from a liar); a liar's link to a peer drops. After every action,
// every honest peer's state must be finite, and two honest peers at the same round must hold the
// same state (the run's one state: liars may cost rounds, never split or poison them). The timers
// must move on (Net::run_until), and nothing but Error may leave a core. Then the run must go on
// (expect_rounds_go_on): with the liars silent and every honest peer back, rounds keep committing.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "../proto/peer_core_net.hpp"
#include "fuzz_seeds.hpp"

namespace {

using namespace loco;
using namespace loco::proto;
namespace pt = loco::proto::testing;

constexpr std::uint8_t kHonest = 4;
constexpr std::uint8_t kLiars[] = {5, 6};
constexpr MessageType kPeerTypes[] = {MessageType::ring_chunk,    MessageType::all_gather_part,
                                      MessageType::state_request, MessageType::state_manifest,
                                      MessageType::state_refusal, MessageType::chunk_request,
                                      MessageType::state_chunk,   MessageType::keepalive,
                                      MessageType::link_open,     MessageType::relay_refused};
constexpr float kValues[] = {std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::infinity(),
                             1e30f,
                             -1.0f,
                             0.0f,
                             3.0f};

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

struct Run {
  pt::Net net{"fp32"};
  std::map<std::uint8_t, std::deque<pt::Net::Wire>> held;  // each liar's, not delivered yet

  std::size_t passing = 0;  // the next liars' messages on the wire: let through

  Run() {
    // A liar silent in a group stalls it for round_timeout: a minute, not five, so that the
    // liveness check's 10 minutes hold a few such attempts.
    net.config.round_timeout = std::chrono::minutes(1);
    net.tracker = std::make_unique<TrackerCore>(net.config, net.tracker_key, std::nullopt, net.now);
    for (std::uint8_t n = 1; n <= kLiars[1]; ++n) net.add(n);
    net.on_wire = [this](const pt::Net::Wire& w) {
      const std::optional<std::uint8_t> liar = liar_of(w.from);
      if (!liar) return true;
      if (passing > 0) {
        --passing;
        return true;
      }
      held[*liar].push_back(w);
      return false;
    };
  }

  std::optional<std::uint8_t> liar_of(const PeerKey& key) const {
    for (const std::uint8_t l : kLiars)
      if (net.peers.at(l).key.public_key() == key) return l;
    return std::nullopt;
  }

  // Up, in no round, and not fetching: where loco-peer would train and say ready.
  bool idle(std::uint8_t n) const {
    const pt::Net::Peer& p = net.peers.at(n);
    if (!p.up || p.core->ready_round() != 0 || p.core->collective_running()) return false;
    for (auto e = p.events.rbegin(); e != p.events.rend(); ++e) {
      if (e->kind == PeerEvent::Kind::must_fetch) return false;
      if (e->kind == PeerEvent::Kind::fetched || e->kind == PeerEvent::Kind::kept) break;
    }
    return true;
  }

  void deliver(pt::Net::Wire w, std::uint8_t how, std::uint8_t arg) {
    std::vector<std::byte>& body = w.body;
    switch (how % 9) {
      case 0: break;  // as it was
      case 1:         // one value of the payload (fp32: the body's last bytes are floats)
        if (body.size() >= 4) {
          const std::size_t floats = body.size() / 4;
          const std::size_t at = body.size() - 4 * (1 + arg % floats);
          const float v = kValues[arg % std::size(kValues)];
          std::memcpy(body.data() + at, &v, 4);
        }
        break;
      case 2:
        if (!body.empty()) body[arg % body.size()] ^= std::byte{0x80};
        break;
      case 3: body.resize(arg % (body.size() + 1)); break;
      case 4:  // twice
        net.wire.push_back(w);
        ++passing;
        break;
      case 5: {  // to another member
        const auto n = static_cast<std::uint8_t>(1 + arg % kHonest);
        w.to = net.peers.at(n).key.public_key();
        break;
      }
      case 6: w.type = kPeerTypes[arg % std::size(kPeerTypes)]; break;
      case 7: return;  // dropped
      case 8:          // every value of the payload scaled up, past any norm bound
        for (std::size_t at = 0; at + 4 <= body.size(); at += 4) {
          float v;
          std::memcpy(&v, body.data() + at, 4);
          v *= 1e6f;
          std::memcpy(body.data() + at, &v, 4);
        }
        break;
    }
    // The wire is empty between actions: these are the first of the liar's on it.
    net.wire.push_back(std::move(w));
    ++passing;
    net.pump();
    passing = 0;
  }

  void act(std::uint8_t what, std::uint8_t who, std::uint8_t arg) {
    const auto n = static_cast<std::uint8_t>(1 + who % kHonest);
    const std::uint8_t liar = kLiars[(arg >> 3) & 1];
    switch (what % 8) {
      case 0:
        if (idle(n)) net.ready(n, 0.01f * static_cast<float>(1 + arg % 7));
        break;
      case 1:
        if (idle(liar)) net.ready(liar, 0.01f * static_cast<float>(1 + arg % 7));
        break;
      case 2:
      case 3: {
        std::deque<pt::Net::Wire>& queue = held[kLiars[who >> 7]];
        if (!queue.empty()) {
          pt::Net::Wire w = std::move(queue.front());
          queue.pop_front();
          deliver(std::move(w), arg >> 4, who);
        }
        break;
      }
      case 4: net.run_for(std::chrono::milliseconds(250) * (1 + arg % 16)); break;
      case 5: {  // an honest peer killed, back as a newcomer with the genesis
        std::size_t up = 0;
        for (std::uint8_t m = 1; m <= kHonest; ++m) up += net.peers.at(m).up ? 1 : 0;
        if (net.peers.at(n).up && up > 2) {
          net.kill(n);
        } else if (!net.peers.at(n).up) {
          net.add(n);
        }
        break;
      }
      case 6: {  // a liar's link to a peer drops (as a bad frame would end it)
        pt::Net::Peer& p = net.peers.at(n);
        if (p.up) {
          p.core->on_peer_lost(net.now, net.peers.at(liar).key.public_key(), "fuzz");
          net.pump();
        }
        break;
      }
      case 7: held[liar].clear(); break;  // a liar goes silent for what it held
    }
  }

  // The liveness check (docs/SECURITY.md, "Liveness"): after whatever the fuzzed actions did, the
  // liars go silent (connected and heartbeating, nothing they send another peer arrives, never
  // ready again), the honest peers that were killed come back as newcomers, and each idle honest
  // peer says ready every virtual second, as loco-peer would after training. At least two more
  // rounds must commit within 10 virtual minutes.
  void expect_rounds_go_on(std::span<const std::uint8_t> input) {
    net.on_wire = [this](const pt::Net::Wire& w) { return !liar_of(w.from); };
    held.clear();
    for (std::uint8_t n = 1; n <= kHonest; ++n)
      if (!net.peers.at(n).up) net.add(n);
    const std::uint64_t from = committed();
    const TimePoint until = net.now + std::chrono::minutes(10);
    while (committed() < from + 2) {
      if (net.now >= until) stuck(input, from);
      for (std::uint8_t n = 1; n <= kHonest; ++n)
        if (idle(n)) net.ready(n, 0.01f);
      net.run_for(std::chrono::seconds(1));
      check();
    }
  }

  std::uint64_t committed() const { return net.tracker->status(net.now).committed_round; }

  // Says what the tracker and the peers were doing, and writes the input out to replay it
  // (fuzz-smoke-peer_sequence FILE).
  [[noreturn]] void stuck(std::span<const std::uint8_t> input, std::uint64_t from) const {
    const TrackerStatus s = net.tracker->status(net.now);
    std::fprintf(stderr,
                 "rounds stopped: round %llu committed at the check's start, %llu 10 min later; "
                 "tracker: %s; %zu member(s), %zu benched\n",
                 static_cast<unsigned long long>(from),
                 static_cast<unsigned long long>(s.committed_round), s.phase.c_str(),
                 s.members.size(), net.tracker->snapshot().benched.size());
    for (const auto& [n, p] : net.peers) {
      const auto member =
          std::find_if(s.members.begin(), s.members.end(), [&](const MemberStatus& m) {
            return m.public_key == secure::to_hex(p.key.public_key());
          });
      std::fprintf(stderr, "  peer %d%s: %s, ready for round %llu, state round %llu, %s\n", n,
                   liar_of(p.key.public_key()) ? " (liar)" : "", p.up ? "up" : "down",
                   static_cast<unsigned long long>(p.up ? p.core->ready_round() : 0),
                   static_cast<unsigned long long>(p.state.round),
                   member == s.members.end() ? "not a member"
                   : member->in_sync         ? "a member in sync"
                                             : "a member out of sync");
    }
    std::uint64_t hash = 14695981039346656037ull;  // FNV-1a: a file name per input
    for (const std::uint8_t b : input) hash = (hash ^ b) * 1099511628211ull;
    const std::string file = "peer_sequence-stuck-" + std::to_string(hash);
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(input.data()),
               static_cast<std::streamsize>(input.size()));
    broken("no two rounds committed in 10 virtual minutes; replay: fuzz-smoke-peer_sequence " +
           file);
  }

  void check() const {
    for (std::uint8_t a = 1; a <= kHonest; ++a) {
      const pt::Net::Peer& p = net.peers.at(a);
      for (const float v : p.state.theta)
        if (!std::isfinite(v))
          broken("peer " + std::to_string(a) + " holds a non-finite state at round " +
                 std::to_string(p.state.round));
      for (std::uint8_t b = a + 1; b <= kHonest; ++b) {
        const pt::Net::Peer& q = net.peers.at(b);
        if (p.state.round == q.state.round && p.state.theta != q.state.theta)
          broken("peers " + std::to_string(a) + " and " + std::to_string(b) +
                 " hold different states of round " + std::to_string(p.state.round));
      }
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 3 * 400) return 0;  // a run of at most 400 actions
  Run run;
  for (std::size_t i = 0; i + 3 <= size; i += 3) {
    run.act(data[i], data[i + 1], data[i + 2]);
    run.check();
  }
  run.net.run_for(std::chrono::seconds(30));  // whatever is pending settles
  run.check();
  run.expect_rounds_go_on({data, size});
  return 0;
}

// Seeds: rounds where everyone is ready and the liars' messages go through as they are, then
// with each kind of change.
std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  std::vector<std::vector<std::uint8_t>> seeds;
  for (std::uint8_t how = 0; how < 9; ++how) {
    std::vector<std::uint8_t> s;
    for (int round = 0; round < 4; ++round) {
      for (std::uint8_t n = 0; n < kHonest; ++n) s.insert(s.end(), {0, n, 1});
      s.insert(s.end(), {1, 0, 2});
      s.insert(s.end(), {1, 0, 2 | 8});
      for (int m = 0; m < 80; ++m)
        s.insert(s.end(), {2, static_cast<std::uint8_t>(m), static_cast<std::uint8_t>(how << 4)});
      s.insert(s.end(), {4, 0, 3});
    }
    seeds.push_back(std::move(s));
  }
  return seeds;
}
