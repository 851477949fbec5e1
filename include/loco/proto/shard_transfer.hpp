#pragma once
// A dataset's train shards served by peers to peers (issue 46; docs/PROTOCOL.md, "Dataset
// shards"), sans-I/O: the messages and the server's rules. The driver reads the bytes (its data
// cache) and carries the messages on the mesh, whose links admit the members of the tracker's
// signed view only, authenticated and encrypted.
//
// A peer asks for a piece of a train shard of the run's manifest by the shard's index in the
// manifest: shard_request {file, offset, length} -> shard_piece {file, offset, bytes} or
// shard_refusal {file, reason}. The run pins the manifest by its hash, so index, size and BLAKE2b
// are the same at both ends; the asker checks each piece against what it asked (its file, its
// offset, no longer than asked) and the whole shard against the manifest's BLAKE2b before it is
// used (fetch/dataset_fetch.hpp), as for a mirror's bytes. A piece is at most kMaxPieceBytes.
//
// The server answers from the shards it holds whole and checked in its cache. Every request is a
// claim of a member: it is served only within the asker's share, twice the size of the shard it
// asks for (an honest asker takes a shard once, twice if its fetch starts over), so one member
// cannot make this peer send without end; past it, and for a shard not held or a range past its
// end, a refusal. Over every asker together, what serving takes of the peer's upstream is capped
// (shard_serve_gate.hpp): a piece within the share is served at the time the cap gives, or refused
// as busy.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "loco/proto/message_type.hpp"
#include "loco/proto/round_formation.hpp"
#include "loco/proto/shard_serve_gate.hpp"

namespace loco::proto {

inline constexpr std::uint32_t kMaxPieceBytes = 1u << 20;

struct ShardRequest {
  std::uint32_t file = 0;  // the index of the shard among the manifest's train shards
  std::uint64_t offset = 0;
  std::uint32_t length = 0;  // 1..kMaxPieceBytes
  bool operator==(const ShardRequest&) const = default;
};

struct ShardPiece {
  std::uint32_t file = 0;
  std::uint64_t offset = 0;
  std::span<const std::byte> bytes;  // into the decoded body
};

struct ShardRefusal {
  std::uint32_t file = 0;
  std::string reason;  // printable, at most kMaxShardReason bytes
  bool operator==(const ShardRefusal&) const = default;
};
inline constexpr std::size_t kMaxShardReason = 200;

std::vector<std::byte> encode(const ShardRequest& request);
std::vector<std::byte> encode_shard_piece(std::uint32_t file, std::uint64_t offset,
                                          std::span<const std::byte> bytes);
std::vector<std::byte> encode(const ShardRefusal& refusal);
// Each throws Error(format) for a body of another type's size, version or shape: a length of 0
// or past kMaxPieceBytes, a piece longer than kMaxPieceBytes, a reason that is not printable.
ShardRequest decode_shard_request(std::span<const std::byte> body);
ShardPiece decode_shard_piece(std::span<const std::byte> body);
ShardRefusal decode_shard_refusal(std::span<const std::byte> body);

// Whether `type` is one of the three (the driver hands them to its shard service, not the core).
bool is_shard_message(MessageType type);

class ShardServer {
 public:
  // The bytes to send back: `length` bytes of `file` from `offset` (the driver reads them), not
  // before `at` (the upload cap's time); or a refusal.
  struct Serve {
    std::uint32_t file = 0;
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    TimePoint at{};
  };
  using Answer = std::variant<Serve, ShardRefusal>;

  explicit ShardServer(ServeLimits limits = {}) : gate_(limits) {}

  // What to answer `from` for `request` at `now`; `held`: the size of the shard when this peer
  // holds it whole and checked (the driver's cache), nothing otherwise. A served answer is counted
  // in the asker's share, and in progress at the cap until finished().
  Answer on_request(TimePoint now, const PeerKey& from, const ShardRequest& request,
                    std::optional<std::uint64_t> held);
  // A Serve answered earlier was sent, or given up (its asker left, its bytes could not be read).
  void finished() { gate_.finished(); }
  // A Serve answered earlier to `to` was given up before its bytes went out: they leave `to`'s
  // share (at most down to zero: `to` may have left and come back meanwhile) and bytes_served().
  // The upload cap's time it took is not given back.
  void not_sent(const PeerKey& to, const Serve& serve);
  std::size_t in_progress() const { return gate_.in_progress(); }
  // Forgets what `peer` was sent (it left the run: its share starts anew if it comes back).
  void forget(const PeerKey& peer);
  std::uint64_t bytes_served() const { return bytes_served_; }

 private:
  std::map<std::pair<PeerKey, std::uint32_t>, std::uint64_t> sent_;  // by asker and shard
  std::uint64_t bytes_served_ = 0;
  ServeGate gate_;
};

}  // namespace loco::proto
