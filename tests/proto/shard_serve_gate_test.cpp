// The upload cap for serving dataset shards (proto/shard_serve_gate.hpp): the times it gives
// pieces at a rate, with one piece ahead; the pieces it holds at once; the wait past which it
// refuses; and a refusal takes nothing. Time is a parameter: exact times, no clock.

#include "loco/proto/shard_serve_gate.hpp"

#include <gtest/gtest.h>

#include "loco/proto/shard_transfer.hpp"

namespace loco::proto {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr TimePoint t0 = TimePoint{} + seconds(100);
constexpr std::uint32_t kPiece = kMaxPieceBytes;

TEST(ShardServeGate, PiecesGoAtTheRateWithOnePieceAhead) {
  // 1 MiB/s: an idle server sends a piece at once, the next ones a second apart.
  ServeGate gate(ServeLimits{.bytes_per_second = kPiece, .max_pieces = 8, .max_wait = seconds(10)});
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, kPiece), t0 + seconds(1));
  EXPECT_EQ(gate.admit(t0, kPiece), t0 + seconds(2));
  // Half a piece is half a second; asked later than it is due, it goes when asked.
  EXPECT_EQ(gate.admit(t0, kPiece / 2), t0 + milliseconds(2500));
  EXPECT_EQ(gate.admit(t0 + seconds(5), kPiece), t0 + seconds(5));
  // After 3 s idle the server holds one piece ahead, not three.
  EXPECT_EQ(gate.admit(t0 + seconds(9), kPiece), t0 + seconds(9));
  EXPECT_EQ(gate.admit(t0 + seconds(9), kPiece), t0 + seconds(10));
  EXPECT_EQ(gate.in_progress(), 7u);
}

TEST(ShardServeGate, APieceThatWouldWaitTooLongIsRefusedAndTakesNothing) {
  // 100 kB/s: a 1 MiB piece takes 10.49 s, longer than the 10 s an asker is kept waiting.
  ServeGate gate(
      ServeLimits{.bytes_per_second = 100'000, .max_pieces = 8, .max_wait = seconds(10)});
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, kPiece), std::nullopt);
  EXPECT_EQ(gate.in_progress(), 1u);
  // A smaller piece still fits (the refusal took none of the rate): 500 kB, 5 s, goes once the
  // backlog ahead of it is one piece.
  EXPECT_EQ(gate.admit(t0, 500'000), t0 + seconds(5));
  // Once the first is sent, what is due at t0 + 15.49 s may be asked at t0 + 6 s.
  gate.finished();
  EXPECT_EQ(gate.admit(t0 + seconds(6), kPiece), t0 + Duration(15'485'760'000));
}

TEST(ShardServeGate, AtMostMaxPiecesAtOnceUnlimitedOrNot) {
  ServeGate gate(ServeLimits{.bytes_per_second = 0, .max_pieces = 2, .max_wait = seconds(10)});
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, 1), std::nullopt);
  gate.finished();
  EXPECT_EQ(gate.admit(t0 + seconds(1), 1), t0 + seconds(1));
  EXPECT_EQ(gate.in_progress(), 2u);
}

}  // namespace
}  // namespace loco::proto
