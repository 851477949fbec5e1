#pragma once
// The shared state of a run as bytes to hash and to transfer: the state of round r is a byte
// sequence (the outer parameters, then the outer optimizer's state: whatever the strategy keeps
// shared, concatenated) cut into chunks of kChunkBytes. Its manifest lists each chunk's BLAKE2b;
// the state hash that peers report to the tracker is the hash of the manifest:
//
//   state hash = BLAKE2b("loco state v1" ‖ u64 round ‖ u64 total bytes ‖ u32 chunk bytes
//                        ‖ H(chunk 0) ‖ H(chunk 1) ‖ ...)
//
// so a newcomer that knows the majority's state hash (from the tracker) can check a manifest
// from any donor before trusting it, then each chunk as it arrives, and drop a donor at its
// first bad chunk. It is BLAKE2b over θ ‖ v ‖ round, through one level of chunk hashes.

#include <cstdint>
#include <span>
#include <vector>

#include "loco/core/hash.hpp"

namespace loco::proto {

inline constexpr std::uint32_t kStateChunkBytes = 1 << 20;
inline constexpr std::uint64_t kMaxStateBytes = std::uint64_t{64} << 30;  // 64 GiB

// The state as the pieces it is made of, without copying them (e.g. the parameter arena, then
// the momentum arena), read as one byte sequence.
class StateBytes {
 public:
  StateBytes() = default;
  explicit StateBytes(std::vector<std::span<const std::byte>> parts);

  std::uint64_t size() const { return size_; }
  // Copies bytes [offset, offset + out.size()) into `out`.
  void read(std::uint64_t offset, std::span<std::byte> out) const;
  const std::vector<std::span<const std::byte>>& parts() const { return parts_; }

 private:
  std::vector<std::span<const std::byte>> parts_;
  std::uint64_t size_ = 0;
};

struct StateManifest {
  std::uint64_t round = 0;
  std::uint64_t total_bytes = 0;
  std::uint32_t chunk_bytes = kStateChunkBytes;
  std::vector<Digest> chunk_hashes;

  std::uint64_t chunk_count() const { return chunk_hashes.size(); }
  std::uint64_t chunk_size(std::uint64_t index) const;  // the last may be short
  Digest state_hash() const;
  bool operator==(const StateManifest&) const = default;
};

// Hashes every chunk of `state` (BLAKE2b, ~1 GB/s).
StateManifest make_manifest(std::uint64_t round, const StateBytes& state,
                            std::uint32_t chunk_bytes = kStateChunkBytes);

// The manifest of a state handed over in pieces, in order, hashed as they come: make_manifest
// hashes a StateBytes through it part by part, without copying a chunk that spans two parts.
class ManifestBuilder {
 public:
  ManifestBuilder(std::uint64_t round, std::uint64_t total_bytes,
                  std::uint32_t chunk_bytes = kStateChunkBytes);
  // The state's next bytes.
  void add(std::span<const std::byte> bytes);
  // Once every byte was added.
  StateManifest finish();

 private:
  StateManifest manifest_;
  std::uint64_t added_ = 0;
  Blake2b chunk_;  // the hash of the chunk being filled
};

}  // namespace loco::proto
