// The upload cap for serving dataset shards (proto/shard_serve_gate.hpp): the times it gives
// pieces at a rate; the pieces it holds at once; the wait past which it refuses; and a refusal
// takes nothing. Time is a parameter: exact times, no clock.

#include "loco/proto/shard_serve_gate.hpp"

#include <gtest/gtest.h>

#include "loco/proto/shard_transfer.hpp"

namespace loco::proto {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr TimePoint t0 = TimePoint{} + seconds(100);
constexpr std::uint32_t kPiece = kMaxPieceBytes;

TEST(ShardServeGate, EachPieceGoesOnceThoseBeforeItHadTheirTimeAtTheRate) {
  // 1 MiB/s: an idle server sends a piece at once, the next ones a second apart.
  ServeGate gate(ServeLimits{.bytes_per_second = kPiece, .max_pieces = 8, .max_wait = seconds(10)});
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, kPiece), t0 + seconds(1));
  EXPECT_EQ(gate.admit(t0, kPiece), t0 + seconds(2));
  // Half a piece takes half a second of the rate.
  EXPECT_EQ(gate.admit(t0, kPiece / 2), t0 + seconds(3));
  EXPECT_EQ(gate.admit(t0, kPiece), t0 + milliseconds(3500));
  // Asked later than it is due, a piece goes when asked; idle time is not saved up.
  EXPECT_EQ(gate.admit(t0 + seconds(9), kPiece), t0 + seconds(9));
  EXPECT_EQ(gate.admit(t0 + seconds(9), kPiece), t0 + seconds(10));
  EXPECT_EQ(gate.in_progress(), 7u);
}

TEST(ShardServeGate, APieceThatWouldWaitTooLongIsRefusedAndTakesNothing) {
  // 100 kB/s: a 1 MiB piece takes 10.49 s, longer than the 10 s an asker is kept waiting.
  ServeGate gate(
      ServeLimits{.bytes_per_second = 100'000, .max_pieces = 8, .max_wait = seconds(10)});
  const Duration piece_time(10'485'760'000);
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, kPiece), std::nullopt);
  EXPECT_EQ(gate.busy_reason(t0),
            "busy: this peer's upload cap for serving (100.0 kB/s) is taken for 10 s");
  // A second later the wait is within 10 s: the refusal took none of the rate.
  EXPECT_EQ(gate.admit(t0 + seconds(1), kPiece), t0 + piece_time);
  // Even a byte would now wait 19 s: refused, though far from max_pieces.
  EXPECT_EQ(gate.admit(t0 + seconds(2), 1), std::nullopt);
  EXPECT_EQ(gate.in_progress(), 2u);
}

TEST(ShardServeGate, AtMostMaxPiecesAtOnceUnlimitedOrNot) {
  ServeGate gate(ServeLimits{.bytes_per_second = 0, .max_pieces = 2, .max_wait = seconds(10)});
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, kPiece), t0);
  EXPECT_EQ(gate.admit(t0, 1), std::nullopt);
  EXPECT_EQ(gate.busy_reason(t0), "busy: 2 pieces in progress, this peer's most at once");
  gate.finished();
  EXPECT_EQ(gate.admit(t0 + seconds(1), 1), t0 + seconds(1));
  EXPECT_EQ(gate.in_progress(), 2u);
}

}  // namespace
}  // namespace loco::proto
