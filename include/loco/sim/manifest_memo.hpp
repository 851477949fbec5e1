#pragma once
// The manifests of modelled peers' states, remembered for the next peer that holds the same bytes
// (docs/SCALE.md). Every member of a group computes the same state from the same mean, and every
// peer that starts holds the genesis: a thousand peers hashing the same θ ‖ v is work the
// simulation makes, not a check a peer needs, since each peer hashes its own state. A state is
// compared byte for byte with each one remembered, so a state that differs in any byte (a liar's
// mean, an older fetched state) is hashed afresh: the manifest returned is always the one
// PeerState::manifest() computes.

#include <cstddef>
#include <deque>

#include "loco/proto/state_manifest.hpp"
#include "loco/sim/modelled_process.hpp"

namespace loco::sim {

class ManifestMemo {
 public:
  // The last `capacity` states hashed (each holds a copy of θ ‖ v).
  explicit ManifestMemo(std::size_t capacity = 4);

  proto::StateManifest manifest(const PeerState& state);
  std::size_t hashed() const { return hashed_; }  // states hashed, not found in memory

 private:
  struct Entry {
    PeerState state;
    proto::StateManifest manifest;
  };
  std::size_t capacity_;
  std::deque<Entry> entries_;  // the most recently used first
  std::size_t hashed_ = 0;
};

}  // namespace loco::sim
