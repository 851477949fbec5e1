#pragma once
// The state every member of a run holds bit for bit after each round: the strategy's shared
// arenas (DiLoCo: the outer parameters θ and the outer momentum v) and the round they are at. Its
// hash is the one peers report to the tracker (proto/state_manifest.hpp: BLAKE2b over the round
// and the chunk hashes of θ ‖ v), and its bytes are what a newcomer fetches.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "loco/core/arena.hpp"
#include "loco/proto/state_manifest.hpp"

namespace loco::train {

// The manifest of a state of `total_bytes` whose chunk i `fill(i, out)` writes into `out`
// (proto::kStateChunkBytes each, the last shorter): the manifest proto::make_manifest gives, its
// chunks filled and hashed in parallel by the calling thread's OpenMP team (BLAKE2b runs at
// ~0.6 GB/s a core here: one core takes 1.1 s for the 680 MB of an 85M-parameter DiLoCo state).
proto::StateManifest hash_chunks(
    std::uint64_t round, std::uint64_t total_bytes,
    const std::function<void(std::uint64_t chunk, std::span<std::byte> out)>& fill);

class SharedState {
 public:
  struct Part {
    std::string name;  // checkpoint prefix, e.g. "outer.params"
    Arena arena;
  };

  SharedState() = default;
  // One arena per name, all of `layout`, zero.
  SharedState(const std::shared_ptr<const ArenaLayout>& layout, std::vector<std::string> names);

  std::uint64_t round() const { return round_; }
  void set_round(std::uint64_t round) { round_ = round; }
  Arena& arena(std::size_t i) { return parts_[i].arena; }
  const Arena& arena(std::size_t i) const { return parts_[i].arena; }
  std::vector<Part>& parts() { return parts_; }
  const std::vector<Part>& parts() const { return parts_; }

  proto::StateBytes bytes() const;
  // Chunks hashed in parallel (hash_chunks).
  proto::StateManifest manifest() const;
  Digest hash() const { return manifest().state_hash(); }
  // Takes the state of `round` from its bytes (a resync). Throws Error(format) when the size is
  // not this state's.
  void load(std::uint64_t round, std::span<const std::byte> bytes);

 private:
  std::vector<Part> parts_;
  std::uint64_t round_ = 0;
};

}  // namespace loco::train
