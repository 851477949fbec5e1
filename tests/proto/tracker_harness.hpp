#pragma once
// A TrackerCore and several TrackerClients wired together in memory with a virtual clock: every
// message is delivered at once, timers fire exactly at their deadlines, and what each side emits
// is recorded for the tests to assert on.

#include <algorithm>
#include <map>
#include <vector>

#include "loco/core/rng.hpp"
#include "loco/proto/tracker_client.hpp"
#include "loco/proto/tracker_core.hpp"

namespace loco::proto::testing {

using namespace std::chrono_literals;

inline secure::KeyPair key(std::uint8_t n) {
  return secure::KeyPair::from_seed(std::array<std::uint8_t, 32>{n, 7});
}

inline std::vector<Setting> run_settings() {
  return {{"model", "gpt-2l-d64"}, {"seed", "1"}, {"codec", "int8:block=256"}};
}

// `bytes` seeded random bytes: a state to transfer.
inline std::vector<std::byte> random_state(std::size_t bytes, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::byte> out(bytes);
  for (auto& b : out) b = static_cast<std::byte>(rng.next_u64());
  return out;
}

inline Digest digest_of(std::uint64_t n) {
  Digest d{};
  for (std::size_t i = 0; i < 8; ++i) d[i] = static_cast<std::uint8_t>(n >> (8 * i));
  d[31] = 0xee;
  return d;
}

inline const Digest kGenesis = digest_of(1000);

struct Harness {
  secure::KeyPair tracker_key = key(200);
  TrackerCoreConfig config;
  std::unique_ptr<TrackerCore> tracker;
  TimePoint now{};

  struct Peer {
    secure::KeyPair key = secure::KeyPair::generate();  // replaced by add()
    std::unique_ptr<TrackerClient> client;
    bool connected = false;
    // Whether the tracker's reachability probe reaches it; unanswered: the probe times out.
    enum class Probe { reached, refused, unanswered } probe = Probe::reached;
    std::vector<ClientEvent> events;
  };
  std::map<std::uint8_t, Peer> peers;
  std::vector<std::pair<TimePoint, TrackerEvent>> tracker_events;
  std::optional<TrackerSnapshot> saved;  // the last state_changed snapshot

  Harness() {
    config.run_id = "run-h";
    config.admission.kind = AdmissionPolicy::Kind::open;
    config.settings = run_settings();
    config.genesis = kGenesis;
    config.shard_count = 16;
  }

  void start(std::optional<TrackerSnapshot> restored = std::nullopt) {
    tracker = std::make_unique<TrackerCore>(config, tracker_key, std::move(restored), now);
  }

  JoinRequest join_request(std::uint8_t n) const {
    JoinRequest r;
    r.software = "loco test";
    r.listen_address = "127.0.0.1:" + std::to_string(9000 + n);
    r.upload_bps = 100'000'000;
    r.settings = run_settings();
    r.genesis = kGenesis;
    r.state_round = 0;
    r.state_hash = kGenesis;
    return r;
  }

  // Creates peer n (not yet connected).
  Peer& add(std::uint8_t n, std::optional<JoinRequest> request = std::nullopt) {
    Peer& p = peers[n];
    p.key = key(n);
    p.client = std::make_unique<TrackerClient>(
        TrackerClientConfig{.run_id = config.run_id,
                            .tracker_key = tracker_key.public_key(),
                            .join = request.value_or(join_request(n))});
    return p;
  }

  void connect(std::uint8_t n) {
    Peer& p = peers.at(n);
    p.connected = true;
    p.client->on_connected(now);
    pump();
  }

  Peer& join(std::uint8_t n) {
    add(n);
    connect(n);
    return peers.at(n);
  }

  void disconnect(std::uint8_t n) {
    Peer& p = peers.at(n);
    p.connected = false;
    p.client->on_disconnect(now);
    tracker->on_disconnect(now, p.key.public_key());
    pump();
  }

  std::optional<std::uint8_t> find(const PeerKey& k) const {
    for (const auto& [n, p] : peers)
      if (p.key.public_key() == k) return n;
    return std::nullopt;
  }

  // Moves every queued message until both sides are quiet.
  void pump() {
    for (bool moved = true; moved;) {
      moved = false;
      std::vector<PeerKey> to_close;  // once the messages queued for them are delivered
      while (auto e = tracker->poll_event()) {
        if (e->kind == TrackerEvent::Kind::state_changed) saved = tracker->snapshot();
        if (e->disconnect && e->peer) to_close.push_back(*e->peer);
        tracker_events.emplace_back(now, std::move(*e));
      }
      while (auto probe = tracker->poll_probe()) {
        const auto n = find(probe->peer);
        const Peer::Probe answer = n ? peers.at(*n).probe : Peer::Probe::unanswered;
        if (answer == Peer::Probe::unanswered) continue;
        moved = true;
        tracker->on_probe_result(now, probe->peer, probe->address, answer == Peer::Probe::reached);
      }
      while (auto t = tracker->poll_transmit()) {
        moved = true;
        if (auto n = find(t->to); n && peers.at(*n).connected)
          peers.at(*n).client->on_message(now, static_cast<std::uint16_t>(t->type), *t->body);
      }
      for (const PeerKey& k : to_close) {
        if (auto n = find(k); n && peers.at(*n).connected) {
          peers.at(*n).connected = false;
          peers.at(*n).client->on_disconnect(now);
        }
      }
      for (auto& [n, p] : peers) {
        while (auto e = p.client->poll_event()) p.events.push_back(std::move(*e));
        while (auto o = p.client->poll_transmit()) {
          moved = true;
          if (p.connected)
            tracker->on_message(now, p.key.public_key(), static_cast<std::uint16_t>(o->type),
                                o->body);
        }
      }
    }
  }

  // Runs every timer up to `until`, each at exactly its deadline.
  void run_until(TimePoint until) {
    for (;;) {
      TimePoint next = tracker->poll_timeout();
      for (auto& [n, p] : peers)
        if (p.connected) next = std::min(next, p.client->poll_timeout());
      if (next > until) break;
      now = std::max(now, next);
      tracker->on_timer(now);
      for (auto& [n, p] : peers)
        if (p.connected) p.client->on_timer(now);
      pump();
    }
    now = until;
  }
  void run_for(Duration d) { run_until(now + d); }

  // Peer n says it is ready for the next round with an update of norm `norm` trained on `tokens`
  // at `step_seconds` a step, built on the run's current state.
  void ready(std::uint8_t n, float norm = 1.0f, std::uint64_t tokens = 0, float step_seconds = 0) {
    const TrackerSnapshot s = tracker->snapshot();
    peers.at(n).client->ready(Ready{.round = s.committed_round + 1,
                                    .update_norm = norm,
                                    .base_hash = s.committed_hash,
                                    .tokens = tokens,
                                    .step_seconds = step_seconds});
    pump();
  }

  // The last event of `kind` peer n received, if any.
  std::optional<ClientEvent> last(std::uint8_t n, ClientEvent::Kind kind) const {
    const auto& events = peers.at(n).events;
    for (auto it = events.rbegin(); it != events.rend(); ++it)
      if (it->kind == kind) return *it;
    return std::nullopt;
  }
  std::size_t count(std::uint8_t n, ClientEvent::Kind kind) const {
    std::size_t c = 0;
    for (const auto& e : peers.at(n).events) c += e.kind == kind;
    return c;
  }
  std::vector<TrackerEvent> tracker_events_of(TrackerEvent::Kind kind) const {
    std::vector<TrackerEvent> out;
    for (const auto& [t, e] : tracker_events)
      if (e.kind == kind) out.push_back(e);
    return out;
  }

  // Every member of the running group reports done with `hash` (or its own from `hashes`), then
  // applies the commit it gets: its state becomes the committed one.
  void finish_round(const std::map<std::uint8_t, Digest>& hashes = {}, Digest hash = digest_of(1)) {
    std::vector<std::uint8_t> members;
    for (auto& [n, p] : peers) {
      const auto g = last(n, ClientEvent::Kind::group);
      if (g && g->group.round == tracker->status(now).next_round) members.push_back(n);
    }
    for (std::uint8_t n : members) {
      const auto g = last(n, ClientEvent::Kind::group)->group;
      const Digest h = hashes.contains(n) ? hashes.at(n) : hash;
      peers.at(n).client->round_done(
          RoundDone{.round = g.round, .attempt = g.attempt, .state_hash = h});
      pump();
    }
    for (std::uint8_t n : members) {
      const auto c = last(n, ClientEvent::Kind::commit);
      if (c) peers.at(n).client->set_state(c->commit.round, c->commit.state_hash);
    }
  }
};

// Member `accuser` names `suspect` as the fault of the last attempt it was sent.
inline void accuse(Harness& h, std::uint8_t accuser, std::uint8_t suspect) {
  const Group g = h.last(accuser, ClientEvent::Kind::group)->group;
  h.peers.at(accuser).client->round_failed(RoundFailed{.round = g.round,
                                                       .attempt = g.attempt,
                                                       .reason = "its chunk held NaN",
                                                       .suspect = key(suspect).public_key()});
  h.pump();
}

inline bool in_group(const Group& g, std::uint8_t n) {
  return std::find(g.members.begin(), g.members.end(), key(n).public_key()) != g.members.end();
}

}  // namespace loco::proto::testing
