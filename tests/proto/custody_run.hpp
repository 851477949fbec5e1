#pragma once
// A tracker core with checkpoint custody in a Harness (tracker_harness.hpp), whose state is a real
// one (so that a manifest hashes to the committed hash), and peers that answer its custody pulls.

#include <map>
#include <vector>

#include "loco/proto/state_transfer.hpp"
#include "tracker_harness.hpp"

namespace loco::proto::testing {

// A run whose state is a real one (so that a manifest hashes to the committed hash), in a
// Harness with custody every `every` rounds (and the run's final round `final_round`, 0: none).
struct CustodyRun {
  Harness h;
  std::vector<std::byte> state = random_state(3000, 9);
  std::map<std::uint8_t, std::size_t> seen;  // events of each peer already answered

  // Peers 1 and 2 by key: the tracker picks among equally loaded donors by key.
  std::uint8_t lo = key(1).public_key() < key(2).public_key() ? 1 : 2;
  std::uint8_t hi = 3 - lo;

  explicit CustodyRun(std::uint32_t every, std::uint64_t final_round = 0) {
    h.config.custody.every = every;
    h.config.final_round = final_round;
    h.start();
  }
  StateManifest manifest(std::uint64_t round) const {
    return make_manifest(round, StateBytes({std::span(state)}), 1000);
  }
  // Peers `members` run round r to its commit, all with the state of round r.
  void round(const std::vector<std::uint8_t>& members) {
    for (std::uint8_t n : members) h.ready(n);
    h.finish_round({}, manifest(h.tracker->status(h.now).next_round).state_hash());
  }
  // The driver's part: stores the copy the core pulled (nothing if none) and hands it back.
  std::optional<std::uint64_t> store_copy() {
    auto copy = h.tracker->poll_custody();
    if (!copy) return std::nullopt;
    h.tracker->set_custody(copy->manifest,
                           std::make_shared<const std::vector<std::byte>>(copy->state));
    h.pump();
    return copy->manifest.round;
  }
  // Peer n answers the tracker's relayed requests from its state of `round`, until quiet.
  std::size_t serve(std::uint8_t n, std::uint64_t round) {
    StateServer server;
    server.serve(manifest(round), StateBytes({std::span(state)}));
    std::size_t answered = 0;
    for (bool more = true; more;) {
      more = false;
      for (std::size_t& i = seen[n]; i < h.peers.at(n).events.size(); ++i) {
        const ClientEvent e = h.peers.at(n).events[i];
        if (e.kind != ClientEvent::Kind::state_relay) continue;
        server.on_message(h.tracker_key.public_key(), e.relay_type, e.relay_body);
        while (auto t = server.poll_transmit()) h.peers.at(n).client->relay(t->type, t->body);
        more = true;
        ++answered;
      }
      h.pump();
    }
    return answered;
  }
};

}  // namespace loco::proto::testing
