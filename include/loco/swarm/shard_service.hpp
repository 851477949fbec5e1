#pragma once
// A peer's dataset shards over the mesh (proto/shard_transfer.hpp), on the network thread: it
// serves the train shards its data cache holds to the members that ask (shard_serving.hpp: within
// each one's share and the upload cap, read off the network thread), and carries this peer's own
// requests for pieces and their answers. The fetch's thread waits for an answer through ShardLink
// (swarm_thread.hpp); the piece's bytes are checked there, the whole shard against the manifest
// (fetch/dataset_fetch.hpp).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loco/proto/link_direction.hpp"
#include "loco/proto/shard_transfer.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "loco/swarm/shard_serving.hpp"

namespace loco::swarm {

// The members a peer may ask for a shard: those of its view, itself left out, and the run's count
// of data shards (the tracker's join reply), by which each member's data shard maps to the
// manifest's shards (data::train_shards_of).
struct ShardPeers {
  std::vector<proto::Member> members;
  std::uint32_t shard_count = 1;
  bool viewed = false;  // a view is in (it comes just after the join's reply)
};

// The answer to one request: the piece's bytes, or why there is none.
struct PieceOutcome {
  std::vector<std::byte> bytes;
  std::string error;  // empty: `bytes` is the piece
};

class ShardService {
 public:
  using Done = std::function<void(PieceOutcome)>;

  // `store`, `limits`, `corrupt`: what it serves and how (ShardServing); `io` runs the network
  // thread.
  ShardService(boost::asio::io_context& io, std::shared_ptr<const ShardStore> store,
               proto::ServeLimits limits, bool corrupt, ShardSend send);

  // A shard message from member `from`. Throws Error(format) for a malformed one (the driver
  // drops that peer).
  void on_message(const proto::PeerKey& from, proto::MessageType type,
                  std::span<const std::byte> body);
  // `peer` left, or its link ended: its requests in flight fail, its share is forgotten.
  void on_lost(const proto::PeerKey& peer, const std::string& why);
  // Asks `peer` for `request`; `done` is called once (on this thread) with the piece, a refusal,
  // the link's loss, or nothing if cancel(id) comes first. Returns the request's id.
  std::uint64_t ask(const proto::PeerKey& peer, const proto::ShardRequest& request, Done done);
  void cancel(std::uint64_t id) { pending_.erase(id); }
  std::uint64_t bytes_served() const { return serving_.bytes_served(); }

 private:
  struct Pending {
    proto::PeerKey peer;
    proto::ShardRequest request;
    Done done;
  };
  // The request in flight at `peer` for `file` at `offset` (any offset: nothing), or
  // pending_.end().
  std::map<std::uint64_t, Pending>::iterator find(const proto::PeerKey& peer, std::uint32_t file,
                                                  std::optional<std::uint64_t> offset);
  void finish(std::map<std::uint64_t, Pending>::iterator at, PieceOutcome outcome);

  ShardSend send_;
  ShardServing serving_;
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_id_ = 1;
};

}  // namespace loco::swarm
