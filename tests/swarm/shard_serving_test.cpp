// The serving side of a peer's dataset shards (swarm/shard_serving.hpp): pieces are read off the
// network thread (a read that blocks holds no other answer up) and sent in the order admitted, no
// sooner than the upload cap allows; a read that fails is a refusal, and a member that leaves
// mid-read is not sent its piece, whose slot is freed once the read ends. The network thread is
// this test's: it runs the io_context.

#include "loco/swarm/shard_serving.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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
  std::chrono::steady_clock::time_point at;
};

proto::PeerKey peer(std::uint8_t n) {
  return secure::KeyPair::from_seed(std::array<std::uint8_t, 32>{n, 9}).public_key();
}

// A store of train shards 0 and 1 of 100 bytes each and shard 2 of 3 MiB, byte i of shard f being
// f * 100 + i (mod 256); a read of shard 0 waits until `release` (at most 30 s), one of shard 1
// fails when `fail_1` is set.
struct Store {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  bool fail_1 = false;

  std::shared_ptr<const ShardStore> make() {
    auto store = std::make_shared<ShardStore>();
    store->held = [](std::uint32_t file) -> std::optional<std::uint64_t> {
      if (file == 2) return std::uint64_t{3} * proto::kMaxPieceBytes;
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
      sent.push_back({to, type, std::move(body), std::chrono::steady_clock::now()});
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
  std::vector<std::byte> expected(length);
  for (std::uint32_t i = 0; i < length; ++i)
    expected[i] = static_cast<std::byte>(file * 100 + offset + i);
  EXPECT_TRUE(std::ranges::equal(piece.bytes, expected));
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

TEST(ShardServing, PiecesGoNoSoonerThanTheUploadCapAllows) {
  Store store;
  store.release.set_value();
  Served s;
  // 10 MiB/s: each 1 MiB piece has 100 ms of the rate, so the second goes 100 ms after the first
  // was asked for at the soonest, the third 200 ms (lower bounds: a loaded machine is only later).
  constexpr std::uint32_t kPiece = proto::kMaxPieceBytes;
  ShardServing serving(
      s.io, store.make(),
      proto::ServeLimits{.bytes_per_second = 10 * kPiece, .max_pieces = 4, .max_wait = seconds(10)},
      false, s.send());
  const auto asked = std::chrono::steady_clock::now();
  for (std::uint64_t k = 0; k < 3; ++k)
    serving.on_request(peer(1), {.file = 2, .offset = k * kPiece, .length = kPiece});
  s.run_until([&] { return s.sent.size() == 3; });
  ASSERT_EQ(s.sent.size(), 3u);
  for (std::uint64_t k = 0; k < 3; ++k) {
    expect_piece(s.sent[k], peer(1), 2, k * kPiece, kPiece);
    EXPECT_GE(s.sent[k].at - asked, std::chrono::milliseconds(100 * static_cast<int>(k))) << k;
  }
}

}  // namespace
}  // namespace loco::swarm
