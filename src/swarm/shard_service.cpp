#include "loco/swarm/shard_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "loco/core/error.hpp"

namespace loco::swarm {

ShardService::ShardService(std::shared_ptr<const ShardStore> store, bool corrupt, Send send)
    : store_(std::move(store)), corrupt_(corrupt), send_(std::move(send)) {}

void ShardService::on_message(const proto::PeerKey& from, proto::MessageType type,
                              std::span<const std::byte> body) {
  using T = proto::MessageType;
  if (type == T::shard_request) {
    serve(from, proto::decode_shard_request(body));
  } else if (type == T::shard_piece) {
    const proto::ShardPiece piece = proto::decode_shard_piece(body);
    const auto at = find(from, piece.file, piece.offset);
    if (at == pending_.end()) return;  // cancelled (too late), or never asked: dropped
    if (piece.bytes.empty() || piece.bytes.size() > at->second.request.length) {
      finish(at, {.bytes = {},
                  .error = fmt::format("a piece of {} bytes for {} asked", piece.bytes.size(),
                                       at->second.request.length)});
      return;
    }
    finish(at, {.bytes = {piece.bytes.begin(), piece.bytes.end()}, .error = {}});
  } else {
    const proto::ShardRefusal refusal = proto::decode_shard_refusal(body);
    const auto at = find(from, refusal.file, std::nullopt);
    if (at != pending_.end()) finish(at, {.bytes = {}, .error = "refused: " + refusal.reason});
  }
}

void ShardService::serve(const proto::PeerKey& from, const proto::ShardRequest& request) {
  const std::optional<std::uint64_t> held = store_ ? store_->held(request.file) : std::nullopt;
  proto::ShardServer::Answer answer = server_.on_request(from, request, held);
  if (const auto* serve = std::get_if<proto::ShardServer::Serve>(&answer)) {
    try {
      std::vector<std::byte> bytes = store_->read(serve->file, serve->offset, serve->length);
      if (corrupt_ && !bytes.empty()) bytes[bytes.size() / 2] ^= std::byte{0x10};
      send_(from, proto::MessageType::shard_piece,
            proto::encode_shard_piece(serve->file, serve->offset, bytes), proto::SendOn::asker);
      return;
    } catch (const Error& e) {
      spdlog::warn("data: cannot serve train shard {} to peer {}: {}", serve->file,
                   secure::short_id(from), e.message());
      answer = proto::ShardRefusal{.file = request.file, .reason = "cannot read it here"};
    }
  }
  send_(from, proto::MessageType::shard_refusal,
        proto::encode(std::get<proto::ShardRefusal>(answer)), proto::SendOn::asker);
}

void ShardService::on_lost(const proto::PeerKey& peer, const std::string& why) {
  server_.forget(peer);
  std::vector<std::uint64_t> failed;
  for (const auto& [id, p] : pending_)
    if (p.peer == peer) failed.push_back(id);
  for (const std::uint64_t id : failed)
    if (const auto at = pending_.find(id); at != pending_.end())  // a done may cancel others
      finish(at, {.bytes = {}, .error = "the link ended: " + why});
}

std::uint64_t ShardService::ask(const proto::PeerKey& peer, const proto::ShardRequest& request,
                                Done done) {
  const std::uint64_t id = next_id_++;
  pending_.emplace(id, Pending{.peer = peer, .request = request, .done = std::move(done)});
  send_(peer, proto::MessageType::shard_request, proto::encode(request), proto::SendOn::own);
  return id;
}

std::map<std::uint64_t, ShardService::Pending>::iterator ShardService::find(
    const proto::PeerKey& peer, std::uint32_t file, std::optional<std::uint64_t> offset) {
  for (auto at = pending_.begin(); at != pending_.end(); ++at) {
    const Pending& p = at->second;
    if (p.peer == peer && p.request.file == file && (!offset || p.request.offset == *offset))
      return at;
  }
  return pending_.end();
}

void ShardService::finish(std::map<std::uint64_t, Pending>::iterator at, PieceOutcome outcome) {
  const Done done = std::move(at->second.done);
  pending_.erase(at);
  done(std::move(outcome));
}

}  // namespace loco::swarm
