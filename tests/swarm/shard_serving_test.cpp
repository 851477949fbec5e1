// The serving side of a peer's dataset shards (swarm/shard_serving.hpp): pieces are read off the
// network thread (a read that blocks holds no other answer up) and sent in the order admitted, a
// read that fails is a refusal, and a member that leaves mid-read is not sent its piece, whose
// slot is freed once the read ends. The network thread is this test's: it runs the io_context.

#include "loco/swarm/shard_serving.hpp"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <future>

#include "loco/core/error.hpp"
#include "loco/secure/identity.hpp"

namespace loco::swarm {
namespace {

using std::chrono::seconds;

struct Sent {
  proto::PeerKey to;
  proto::MessageType type;
  std::vector<std::byte> body;
};

proto::PeerKey peer(std::uint8_t n) {
  return secure::KeyPair::from_seed(std::array<std::uint8_t, 32>{n, 9}).public_key();
}

// A store of train shards 0 and 1 of 100 bytes each, byte i of shard f being f * 100 + i; a read
// of shard 0 waits until `release` (at most 30 s), one of shard 1 fails when `fail_1` is set.
struct Store {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  bool fail_1 = false;

  std::shared_ptr<const ShardStore> make() {
    auto store = std::make_shared<ShardStore>();
    store->held = [](std::uint32_t file) -> std::optional<std::uint64_t> {
      return file < 2 ? std::optional<std::uint64_t>(100) : std::nullopt;
    };
    store->read = [released = released, fail = fail_1](std::uint32_t file, std::uint64_t offset,
                                                       std::uint32_t length) {
      if (file == 0 && released.wait_for(seconds(30)) != std::future_status::ready)
        throw Error(ErrorCategory::io, "never released");
      if (file == 1 && fail) throw Error(ErrorCategory::io, "a bad sector");
      std::vector<std::byte> bytes(length);
      for (std::uint32_t i = 0; i < length; ++i)
        bytes[i] = static_cast<std::byte>(file * 100 + offset + i);
      return bytes;
    };
    return store;
  }
};

struct Served {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work =
      boost::asio::make_work_guard(io);
  std::vector<Sent> sent;
  ShardSend send() {
    return [this](const proto::PeerKey& to, proto::MessageType type, std::vector<std::byte> body,
                  proto::SendOn on) {
      EXPECT_EQ(on, proto::SendOn::asker);
      sent.push_back({to, type, std::move(body)});
    };
  }
  // Runs the network thread until `done` (or 30 s without a handler).
  template <typename Done>
  void run_until(Done done) {
    while (!done() && io.run_one_for(seconds(30)) > 0) {
    }
  }
};

void expect_piece(const Sent& sent, const proto::PeerKey& to, std::uint32_t file,
                  std::uint64_t offset, std::uint32_t length) {
  ASSERT_EQ(sent.type, proto::MessageType::shard_piece);
  EXPECT_EQ(sent.to, to);
  const proto::ShardPiece piece = proto::decode_shard_piece(sent.body);
  EXPECT_EQ(piece.file, file);
  EXPECT_EQ(piece.offset, offset);
  ASSERT_EQ(piece.bytes.size(), length);
  for (std::uint32_t i = 0; i < length; ++i)
    EXPECT_EQ(piece.bytes[i], static_cast<std::byte>(file * 100 + offset + i));
}

std::string refusal_reason(const Sent& sent) {
  EXPECT_EQ(sent.type, proto::MessageType::shard_refusal);
  return proto::decode_shard_refusal(sent.body).reason;
}

TEST(ShardServing, AReadThatBlocksHoldsNoOtherAnswerUpAndPiecesGoInTheOrderAsked) {
  Store store;
  Served s;
  ShardServing serving(s.io, store.make(), proto::ServeLimits{}, false, s.send());
  const proto::PeerKey a = peer(1), b = peer(2);
  serving.on_request(a, {.file = 0, .offset = 10, .length = 50});  // its read blocks
  serving.on_request(b, {.file = 5, .offset = 0, .length = 10});   // not held
  serving.on_request(b, {.file = 1, .offset = 90, .length = 50});  // cut at the shard's end
  // The refusal went at once, while a's read is blocked on the reader thread.
  ASSERT_EQ(s.sent.size(), 1u);
  EXPECT_EQ(s.sent[0].to, b);
  EXPECT_EQ(refusal_reason(s.sent[0]), "not held here");
  EXPECT_EQ(serving.in_progress(), 2u);
  store.release.set_value();
  s.run_until([&] { return s.sent.size() == 3; });
  ASSERT_EQ(s.sent.size(), 3u);
  expect_piece(s.sent[1], a, 0, 10, 50);
  expect_piece(s.sent[2], b, 1, 90, 10);
  EXPECT_EQ(serving.in_progress(), 0u);
  EXPECT_EQ(serving.bytes_served(), 60u);
}

TEST(ShardServing, APieceThatCannotBeReadIsRefused) {
  Store store;
  store.fail_1 = true;
  Served s;
  ShardServing serving(s.io, store.make(), proto::ServeLimits{}, false, s.send());
  serving.on_request(peer(1), {.file = 1, .offset = 0, .length = 100});
  s.run_until([&] { return !s.sent.empty(); });
  ASSERT_EQ(s.sent.size(), 1u);
  EXPECT_EQ(refusal_reason(s.sent[0]), "cannot read it here");
  EXPECT_EQ(serving.in_progress(), 0u);
}

TEST(ShardServing, AMemberThatLeavesMidReadIsNotSentItsPieceAndItsSlotIsFreed) {
  Store store;
  Served s;
  ShardServing serving(
      s.io, store.make(),
      proto::ServeLimits{.bytes_per_second = 0, .max_pieces = 1, .max_wait = seconds(10)}, false,
      s.send());
  const proto::PeerKey a = peer(1), b = peer(2);
  serving.on_request(a, {.file = 0, .offset = 0, .length = 100});
  serving.forget(a);  // a's link ended while its piece is read
  // Its slot is held while the read is under way: b is refused as busy.
  serving.on_request(b, {.file = 1, .offset = 0, .length = 100});
  ASSERT_EQ(s.sent.size(), 1u);
  EXPECT_EQ(refusal_reason(s.sent[0]).substr(0, 5), "busy:");
  store.release.set_value();
  s.run_until([&] { return serving.in_progress() == 0; });
  EXPECT_EQ(serving.in_progress(), 0u);
  EXPECT_EQ(s.sent.size(), 1u);  // nothing for a
  serving.on_request(b, {.file = 1, .offset = 0, .length = 100});
  s.run_until([&] { return s.sent.size() == 2; });
  ASSERT_EQ(s.sent.size(), 2u);
  expect_piece(s.sent[1], b, 1, 0, 100);
}

}  // namespace
}  // namespace loco::swarm
