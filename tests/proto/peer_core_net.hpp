#pragma once
// PeerCores with a real TrackerCore in virtual time, for tests and the peer_sequence fuzz target:
// peers' messages delivered in memory, timers fired at their deadlines, processes killed at chosen
// points, and each peer's application side played as loco-peer plays it (θ + mean reported, the
// committed state installed, a fetched one loaded). As a driver does, a message a core refuses
// (Error) drops its sender's link at that peer.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/proto/peer_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto::testing {

using namespace std::chrono_literals;

constexpr std::size_t kDim = 1000;

// θ at a round: what a peer holds and serves.
struct State {
  std::uint64_t round = 0;
  std::vector<float> theta = std::vector<float>(kDim, 0.5f);

  std::span<const std::byte> bytes() const { return std::as_bytes(std::span(theta)); }
  StateManifest manifest() const { return make_manifest(round, StateBytes({bytes()})); }
};

struct Net {
  secure::KeyPair tracker_key = key(200);
  TrackerCoreConfig config;
  std::unique_ptr<TrackerCore> tracker;
  TimePoint now{};

  struct Peer {
    secure::KeyPair key = secure::KeyPair::generate();
    std::unique_ptr<PeerCore> core;
    bool up = true;
    bool tracker_link = true;
    State state;
    std::optional<State> tentative;
    std::vector<PeerEvent> events;
    std::map<MessageType, int> received;  // from peers, by type
    int refused = 0;                      // messages its core refused (Error): link dropped
    bool hold_groups = false;             // the tracker's group messages wait in `held`
    std::vector<ClientEvent> held;
  };
  std::map<std::uint8_t, Peer> peers;
  struct Wire {
    PeerKey from;
    PeerKey to;
    MessageType type;
    std::vector<std::byte> body;
    SendOn on = SendOn::own;
  };
  std::deque<Wire> wire;
  std::vector<Wire> sent;             // every message between peers, bodies left out
  std::set<std::uint8_t> behind_nat;  // the tracker's probe does not reach these
  // Called with each message between peers before it is delivered; false drops it.
  std::function<bool(const Wire&)> on_wire;
  // The same for each message from the tracker.
  std::function<bool(const Transmit&)> from_tracker;

  explicit Net(std::string codec = "fp32") : codec_(std::move(codec)) {
    config.run_id = "run-p";
    config.admission.kind = AdmissionPolicy::Kind::open;
    config.settings = testing::run_settings();
    config.genesis = State{}.manifest().state_hash();
    config.shard_count = 16;
    config.max_members_per_network = 0;
    tracker = std::make_unique<TrackerCore>(config, tracker_key, std::nullopt, now);
  }

  // Starts peer n's process (again, after kill(n): a new process, as up as a new one).
  Peer& add(std::uint8_t n, State state = {}) {
    Peer& p = peers[n];
    p = Peer{};
    p.key = key(n);
    p.state = std::move(state);
    const StateManifest manifest = p.state.manifest();
    p.core = std::make_unique<PeerCore>(
        PeerCoreConfig{.self = p.key.public_key(),
                       .signer = &p.key,
                       .codec = codec_,
                       .chunk_values = 256,
                       .all_reduce = AllReduceAlgorithm::direct,
                       .gossip_group = 0,
                       .gossip_wait = 10min,
                       .gossip_group_of = {}},
        TrackerClientConfig{
            .run_id = config.run_id,
            .tracker_key = tracker_key.public_key(),
            .join = JoinRequest{.software = "loco test",
                                .listen_address = "127.0.0.1:" + std::to_string(9000 + n),
                                .upload_bps = 100'000'000,
                                .credential = {},
                                .settings = testing::run_settings(),
                                .genesis = config.genesis,
                                .state_round = p.state.round,
                                .state_hash = manifest.state_hash()}});
    serve(p);
    p.core->client().on_connected(now);
    pump();
    return p;
  }

  static void serve(Peer& p) { p.core->serve(p.state.manifest(), StateBytes({p.state.bytes()})); }

  std::optional<std::uint8_t> find(const PeerKey& k) const {
    for (const auto& [n, p] : peers)
      if (p.key.public_key() == k) return n;
    return std::nullopt;
  }

  // Peer n is ready for its next round with an update of all `value`, trained on `tokens`.
  void ready(std::uint8_t n, float value, std::uint64_t tokens = 0) {
    Peer& p = peers.at(n);
    const auto delta = std::make_shared<std::vector<float>>(kDim, value);
    p.core->ready(Ready{.round = p.state.round + 1,
                        .update_norm = std::abs(value) * std::sqrt(static_cast<float>(kDim)),
                        .base_hash = p.state.manifest().state_hash(),
                        .tokens = tokens},
                  delta);
    pump();
  }

  // The process of peer n ends: its links close at the others, the tracker sees it go.
  void kill(std::uint8_t n) {
    Peer& dead = peers.at(n);
    dead.up = false;
    tracker->on_disconnect(now, dead.key.public_key());
    for (auto& [m, p] : peers)
      if (p.up) p.core->on_peer_lost(now, dead.key.public_key(), "killed");
    pump();
  }

  // The application side of a peer, as loco-peer's: the mean's state (θ + mean) reported, the
  // committed one installed, a fetched one loaded.
  void apply(Peer& p, const PeerEvent& e) {
    switch (e.kind) {
      case PeerEvent::Kind::mean: {
        State next{.round = e.round, .theta = p.state.theta};
        const std::vector<float> mean = e.mean->values();
        for (std::size_t i = 0; i < kDim; ++i) next.theta[i] += mean[i];
        p.core->round_done(e.round, e.attempt, next.manifest().state_hash());
        p.tentative = std::move(next);
        return;
      }
      case PeerEvent::Kind::committed:
        if (e.mine && p.tentative) {
          p.state = std::move(*p.tentative);
          p.tentative.reset();
          serve(p);
        }
        return;
      case PeerEvent::Kind::fetched: {
        if (!e.state) return;  // the state it serves
        State loaded{.round = e.round};
        std::memcpy(loaded.theta.data(), e.state->data(), e.state->size());
        p.state = std::move(loaded);
        serve(p);
        p.core->state_report(p.state.round, p.state.manifest().state_hash());
        return;
      }
      default: return;
    }
  }

  void pump() {
    for (bool moved = true; moved;) {
      moved = false;
      while (tracker->poll_event()) {
      }
      while (auto probe = tracker->poll_probe()) {
        moved = true;
        const auto n = find(probe->peer);
        tracker->on_probe_result(now, probe->peer, probe->address, !behind_nat.contains(*n));
      }
      while (auto t = tracker->poll_transmit()) {
        moved = true;
        if (from_tracker && !from_tracker(*t)) continue;
        if (auto n = find(t->to); n && peers.at(*n).up && peers.at(*n).tracker_link)
          peers.at(*n).core->client().on_message(now, static_cast<std::uint16_t>(t->type),
                                                 *t->body);
      }
      for (auto& [n, p] : peers) {
        if (!p.up) continue;
        while (auto e = p.core->client().poll_event()) {
          if (p.hold_groups && e->kind == ClientEvent::Kind::group) {
            p.held.push_back(std::move(*e));
            continue;
          }
          p.core->on_client_event(now, *e);
        }
        while (auto e = p.core->poll_event()) {
          apply(p, *e);
          p.events.push_back(std::move(*e));
          moved = true;
        }
        while (auto t = p.core->poll_transmit()) {
          moved = true;
          sent.push_back(Wire{p.key.public_key(), t->to, t->type, {}, t->on});
          wire.push_back(Wire{p.key.public_key(), t->to, t->type, std::move(t->body), t->on});
        }
        while (auto o = p.core->client().poll_transmit()) {
          moved = true;
          if (p.tracker_link)
            tracker->on_message(now, p.key.public_key(), static_cast<std::uint16_t>(o->type),
                                o->body);
        }
      }
      while (!wire.empty()) {
        Wire w = std::move(wire.front());
        wire.pop_front();
        moved = true;
        const auto n = find(w.to);
        if (!n || !peers.at(*n).up || (on_wire && !on_wire(w))) continue;
        Peer& to = peers.at(*n);
        ++to.received[w.type];
        try {
          to.core->on_peer_message(now, w.from, w.type, w.body);
        } catch (const Error& e) {
          ++to.refused;
          to.core->on_peer_lost(now, w.from, e.what());
        }
      }
    }
  }

  // Peer n's process ends as the first message to it arrives (that message and everything it
  // would have sent after are lost); the test then calls kill(n) for the others to see it go.
  void die_on_first_message(std::uint8_t n) {
    on_wire = [this, n](const Wire& w) {
      Peer& p = peers.at(n);
      if (w.to == p.key.public_key() && p.up) {
        p.up = false;
        return false;
      }
      return w.from != p.key.public_key() || p.up;
    };
  }

  // Hands peer n the group messages it held back.
  void release_groups(std::uint8_t n) {
    Peer& p = peers.at(n);
    p.hold_groups = false;
    for (const ClientEvent& e : std::exchange(p.held, {})) p.core->on_client_event(now, e);
    pump();
  }

  void run_until(TimePoint until) {
    for (std::size_t steps = 0;; ++steps) {
      if (steps == 1'000'000) throw std::logic_error("timers do not move on");
      TimePoint next = tracker->poll_timeout();
      for (auto& [n, p] : peers)
        if (p.up) next = std::min({next, p.core->client().poll_timeout(), p.core->poll_timeout()});
      if (next > until) break;
      now = std::max(now, next);
      tracker->on_timer(now);
      for (auto& [n, p] : peers) {
        if (!p.up) continue;
        p.core->client().on_timer(now);
        p.core->on_timer(now);
      }
      pump();
    }
    now = until;
  }
  void run_for(Duration d) { run_until(now + d); }

  std::vector<PeerEvent> events(std::uint8_t n, PeerEvent::Kind kind) const {
    std::vector<PeerEvent> out;
    for (const PeerEvent& e : peers.at(n).events)
      if (e.kind == kind) out.push_back(e);
    return out;
  }

 private:
  std::string codec_;
};

}  // namespace loco::proto::testing
