#include "loco/swarm/shard_serving.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <utility>

#include "loco/core/error.hpp"

namespace loco::swarm {

ShardServing::ShardServing(boost::asio::io_context& io, std::shared_ptr<const ShardStore> store,
                           proto::ServeLimits limits, bool corrupt, ShardSend send)
    : io_(io),
      store_(std::move(store)),
      corrupt_(corrupt),
      send_(std::move(send)),
      server_(limits),
      timer_(io),
      reader_(store_ ? std::make_unique<boost::asio::thread_pool>(1) : nullptr) {}

ShardServing::~ShardServing() {
  if (!reader_) return;
  reader_->stop();  // reads not started are dropped; the one under way ends first
  reader_->join();
}

void ShardServing::on_request(const proto::PeerKey& from, const proto::ShardRequest& request) {
  const std::optional<std::uint64_t> held = store_ ? store_->held(request.file) : std::nullopt;
  proto::ShardServer::Answer answer = server_.on_request(steady_now(), from, request, held);
  if (const auto* refusal = std::get_if<proto::ShardRefusal>(&answer)) {
    send_(from, proto::MessageType::shard_refusal, proto::encode(*refusal), proto::SendOn::asker);
    return;
  }
  queue_.push_back(Piece{.id = next_id_++,
                         .to = from,
                         .serve = std::get<proto::ShardServer::Serve>(answer),
                         .read = false,
                         .dropped = false,
                         .bytes = {},
                         .failure = {}});
  start_read(queue_.back());
}

void ShardServing::start_read(const Piece& piece) {
  boost::asio::post(*reader_, [this, &io = io_, store = store_, serve = piece.serve, id = piece.id,
                               alive = std::weak_ptr(alive_)] {
    std::vector<std::byte> bytes;
    std::string failure;
    try {
      bytes = store->read(serve.file, serve.offset, serve.length);
    } catch (const Error& e) {
      failure = e.message();
    }
    boost::asio::post(
        io, [this, alive, id, bytes = std::move(bytes), failure = std::move(failure)]() mutable {
          if (alive.lock()) read_done(id, std::move(bytes), std::move(failure));
        });
  });
}

void ShardServing::read_done(std::uint64_t id, std::vector<std::byte> bytes, std::string failure) {
  for (Piece& piece : queue_) {
    if (piece.id != id) continue;
    piece.read = true;
    piece.bytes = std::move(bytes);
    piece.failure = std::move(failure);
    break;
  }
  send_due();
}

void ShardServing::send_due() {
  const TimePoint now = steady_now();
  while (!queue_.empty() && queue_.front().read) {
    const Piece& head = queue_.front();
    if (!head.dropped && head.failure.empty() && head.serve.at > now) {
      timer_.expires_at(to_steady(head.serve.at));
      timer_.async_wait([this, alive = std::weak_ptr(alive_)](const boost::system::error_code& e) {
        if (!e && alive.lock()) send_due();
      });
      return;
    }
    Piece piece = std::move(queue_.front());
    queue_.pop_front();
    server_.finished();
    answer(std::move(piece));
  }
}

void ShardServing::answer(Piece piece) {
  const proto::ShardServer::Serve& serve = piece.serve;
  if (piece.dropped || !piece.failure.empty()) server_.not_sent(piece.to, serve);
  if (piece.dropped) return;
  if (!piece.failure.empty()) {
    spdlog::warn("data: cannot serve train shard {} to peer {}: {}", serve.file,
                 secure::short_id(piece.to), piece.failure);
    send_(piece.to, proto::MessageType::shard_refusal,
          proto::encode(proto::ShardRefusal{.file = serve.file, .reason = "cannot read it here"}),
          proto::SendOn::asker);
    return;
  }
  if (corrupt_ && !piece.bytes.empty()) piece.bytes[piece.bytes.size() / 2] ^= std::byte{0x10};
  send_(piece.to, proto::MessageType::shard_piece,
        proto::encode_shard_piece(serve.file, serve.offset, piece.bytes), proto::SendOn::asker);
}

void ShardServing::forget(const proto::PeerKey& peer) {
  server_.forget(peer);
  for (Piece& piece : queue_)
    if (piece.to == peer) piece.dropped = true;
  send_due();  // a dropped head that was waiting for its time no longer holds the others
}

}  // namespace loco::swarm
