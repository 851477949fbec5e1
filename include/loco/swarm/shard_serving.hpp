#pragma once
// The serving side of a peer's dataset shards (shard_service.hpp), driven on the network thread:
// a member's request is answered by proto::ShardServer (its share, the upload cap), and a piece it
// serves is read from the data cache on a reader thread of its own, so that a slow disk never
// holds the network thread (and the round traffic it carries) up. The piece comes back to the
// network thread, waits there for the time the cap gave it, and is sent.
//
// Order: pieces are read, and sent, in the order admitted (one reader; the cap's times never go
// back), each answer naming its file and offset. A member that leaves (its link ends) while its
// piece is read or waits is not sent it; the piece's slot is freed once its read ends.
// The mesh has no priorities: a piece handed to it is sent in turn with the round's messages on
// that link, so it is the cap (and one request at a time per asker) that keeps serving from
// crowding the rounds out.
// Threads: every call on the network thread; store->read on the reader thread; store->held on
// the network thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loco/proto/link_direction.hpp"
#include "loco/proto/shard_transfer.hpp"

namespace loco::swarm {

// What a peer serves of its dataset (host/peer_shards.hpp: its data cache). held: the size of
// train shard `file` when the cache holds it whole and checked (network thread); read: its bytes
// (reader thread; throws Error(io) when they cannot be read: the asker is refused).
struct ShardStore {
  std::function<std::optional<std::uint64_t>(std::uint32_t file)> held;
  std::function<std::vector<std::byte>(std::uint32_t file, std::uint64_t offset,
                                       std::uint32_t length)>
      read;
};

using ShardSend = std::function<void(const proto::PeerKey& to, proto::MessageType type,
                                     std::vector<std::byte> body, proto::SendOn on)>;

class ShardServing {
 public:
  // `store` may be null: this peer serves nothing. `corrupt`: for the test suite only, every
  // piece served has a bit flipped (a liar's bytes). `io` runs the network thread.
  ShardServing(boost::asio::io_context& io, std::shared_ptr<const ShardStore> store,
               proto::ServeLimits limits, bool corrupt, ShardSend send);
  // Waits for the read under way, if any (the reader thread is joined); reads not started are
  // dropped.
  ~ShardServing();
  ShardServing(const ShardServing&) = delete;
  ShardServing& operator=(const ShardServing&) = delete;

  void on_request(const proto::PeerKey& from, const proto::ShardRequest& request);
  // `peer` left, or its link ended: its pieces not sent yet are dropped, its share forgotten.
  void forget(const proto::PeerKey& peer);
  std::uint64_t bytes_served() const { return server_.bytes_served(); }
  // Pieces admitted and not yet sent or dropped (for tests).
  std::size_t in_progress() const { return server_.in_progress(); }

 private:
  struct Piece {
    std::uint64_t id = 0;
    proto::PeerKey to;
    proto::ShardServer::Serve serve;
    bool read = false;
    bool dropped = false;
    std::vector<std::byte> bytes;
    std::string failure;  // the read's error: the asker is refused
  };
  void start_read(const Piece& piece);
  void read_done(std::uint64_t id, std::vector<std::byte> bytes, std::string failure);
  // Sends the pieces at the queue's head that are read and due, and waits for the next one's time.
  void send_due();
  void answer(Piece piece);

  boost::asio::io_context& io_;
  std::shared_ptr<const ShardStore> store_;
  bool corrupt_;
  ShardSend send_;
  proto::ShardServer server_;
  std::deque<Piece> queue_;  // in the order admitted
  std::uint64_t next_id_ = 1;
  boost::asio::steady_timer timer_;
  // Handlers posted to the network thread hold it weakly: after this is gone they do nothing.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
  // One thread (none when nothing is served); the last member: joined before the others go.
  std::unique_ptr<boost::asio::thread_pool> reader_;
};

}  // namespace loco::swarm
