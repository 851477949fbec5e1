#include "loco/proto/shard_transfer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/byte_io.hpp"

namespace loco::proto {

std::vector<std::byte> encode(const ShardRequest& request) {
  ByteWriter w = start_message(MessageType::shard_request);
  w.u32(request.file);
  w.u64(request.offset);
  w.u32(request.length);
  return w.finish();
}

std::vector<std::byte> encode_shard_piece(std::uint32_t file, std::uint64_t offset,
                                          std::span<const std::byte> bytes) {
  ByteWriter w = start_message(MessageType::shard_piece, 16 + bytes.size());
  w.u32(file);
  w.u64(offset);
  w.bytes(bytes);
  return w.finish();
}

std::vector<std::byte> encode(const ShardRefusal& refusal) {
  ByteWriter w = start_message(MessageType::shard_refusal);
  w.u32(refusal.file);
  write_text(w, refusal.reason, kMaxShardReason);
  return w.finish();
}

ShardRequest decode_shard_request(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::shard_request);
  ShardRequest request{.file = r.u32(), .offset = r.u64(), .length = r.u32()};
  if (request.length == 0 || request.length > kMaxPieceBytes)
    r.fail(fmt::format("a piece of {} bytes asked for (1 to {})", request.length, kMaxPieceBytes));
  r.expect_end();
  return request;
}

ShardPiece decode_shard_piece(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::shard_piece);
  ShardPiece piece{.file = r.u32(), .offset = r.u64(), .bytes = {}};
  piece.bytes = r.rest();
  if (piece.bytes.size() > kMaxPieceBytes)
    r.fail(fmt::format("a piece of {} bytes (at most {})", piece.bytes.size(), kMaxPieceBytes));
  return piece;
}

ShardRefusal decode_shard_refusal(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::shard_refusal);
  ShardRefusal refusal{.file = r.u32(), .reason = {}};
  refusal.reason = read_text(r, kMaxShardReason);
  r.expect_end();
  return refusal;
}

bool is_shard_message(MessageType type) {
  return type == MessageType::shard_request || type == MessageType::shard_piece ||
         type == MessageType::shard_refusal;
}

ShardServer::Answer ShardServer::on_request(TimePoint now, const PeerKey& from,
                                            const ShardRequest& request,
                                            std::optional<std::uint64_t> held) {
  const auto refuse = [&](std::string why) {
    return ShardRefusal{.file = request.file, .reason = std::move(why)};
  };
  if (!held) return refuse("not held here");
  if (request.offset >= *held)
    return refuse(fmt::format("offset {} is past the shard's {} bytes", request.offset, *held));
  const auto length =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(request.length, *held - request.offset));
  std::uint64_t& sent = sent_[{from, request.file}];
  if (sent + length > 2 * *held)
    return refuse(
        fmt::format("this shard's share is used up ({} bytes sent, twice its size)", sent));
  const std::optional<TimePoint> at = gate_.admit(now, length);
  if (!at) return refuse(gate_.busy_reason(now));
  sent += length;
  bytes_served_ += length;
  return Serve{.file = request.file, .offset = request.offset, .length = length, .at = *at};
}

void ShardServer::not_sent(const PeerKey& to, const Serve& serve) {
  bytes_served_ -= serve.length;
  const auto it = sent_.find({to, serve.file});
  if (it != sent_.end()) it->second -= std::min<std::uint64_t>(it->second, serve.length);
}

void ShardServer::forget(const PeerKey& peer) {
  std::erase_if(sent_, [&](const auto& entry) { return entry.first.first == peer; });
}

}  // namespace loco::proto
