#include "loco/swarm/shard_service.hpp"

#include <fmt/format.h>

#include <utility>

namespace loco::swarm {

ShardService::ShardService(boost::asio::io_context& io, std::shared_ptr<const ShardStore> store,
                           proto::ServeLimits limits, bool corrupt, ShardSend send)
    : send_(send), serving_(io, std::move(store), limits, corrupt, std::move(send)) {}

void ShardService::on_message(const proto::PeerKey& from, proto::MessageType type,
                              std::span<const std::byte> body) {
  using T = proto::MessageType;
  if (type == T::shard_request) {
    serving_.on_request(from, proto::decode_shard_request(body));
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

void ShardService::on_lost(const proto::PeerKey& peer, const std::string& why) {
  serving_.forget(peer);
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
