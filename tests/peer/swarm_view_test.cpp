// loco-swarm's reading of loco-peer's lines and its combined progress line and summary.

#include "peer/swarm_view.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace loco::peer {
namespace {

using namespace std::chrono_literals;

// As loco-peer logs them (spdlog's text format) and prints them.
std::string progress_line(int round, int step, double loss, double sent) {
  return fmt::format(
      "2026-11-24 01:02:03.456 info  round {:>4} | step {:>6}/300 | loss {:.4f} | 5120 tok/s | "
      "sent {:.1f} MB recv {:.1f} MB | net wait 0.3 s",
      round, step, loss, sent, sent);
}

std::string summary_line(const std::string& id, const std::string& state) {
  return "peer " + id +
         ": round 15, step 300, validation loss 1.4321 (floor 1.3850), sent 1.2 MB, received "
         "1.3 MB, state " +
         state;
}

TEST(SwarmView, ParsesAProgressLine) {
  const auto p = parse_progress(progress_line(3, 60, 2.4125, 0.8));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->round, 3u);
  EXPECT_EQ(p->step, 60u);
  EXPECT_EQ(p->steps, 300u);
  EXPECT_DOUBLE_EQ(p->loss, 2.4125);
  EXPECT_DOUBLE_EQ(p->tokens_per_s, 5120);
  EXPECT_DOUBLE_EQ(p->sent_mb, 0.8);
  EXPECT_DOUBLE_EQ(p->received_mb, 0.8);
  EXPECT_DOUBLE_EQ(p->wait_s, 0.3);
}

TEST(SwarmView, IgnoresOtherLinesThatMentionARound) {
  EXPECT_FALSE(parse_progress("2026-11-24 01:02:03.456 info  round 3 attempt 1 aborted: x"));
  EXPECT_FALSE(parse_progress("resuming from peer.ckpt: round 3, step 60"));
  EXPECT_FALSE(parse_progress(""));
  EXPECT_FALSE(parse_summary(progress_line(3, 60, 2.4, 0.8)));
}

TEST(SwarmView, ParsesASummaryLineWithAndWithoutTheFloor) {
  const auto s = parse_summary(summary_line("1a2b3c4d5e6f", "0123456789abcdef"));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->id, "1a2b3c4d5e6f");
  EXPECT_EQ(s->round, 15u);
  EXPECT_EQ(s->step, 300u);
  EXPECT_DOUBLE_EQ(s->val_loss, 1.4321);
  ASSERT_TRUE(s->floor.has_value());
  EXPECT_DOUBLE_EQ(*s->floor, 1.3850);
  EXPECT_DOUBLE_EQ(s->sent_mb, 1.2);
  EXPECT_DOUBLE_EQ(s->received_mb, 1.3);
  EXPECT_EQ(s->state, "0123456789abcdef");

  const auto no_floor = parse_summary(
      "peer 1a2b3c4d5e6f: round 2, step 40, validation loss 3.5000, sent 0.1 MB, received 0.1 "
      "MB, state 00000000ffffffff");
  ASSERT_TRUE(no_floor.has_value());
  EXPECT_FALSE(no_floor->floor.has_value());
  EXPECT_EQ(no_floor->state, "00000000ffffffff");
  EXPECT_FALSE(parse_summary("peer 1a2b3c4d5e6f: round 2, step 40"));
}

TEST(SwarmView, RendersOneLineOnceEveryPeerHasReported) {
  SwarmView view(3);
  const auto t = SwarmView::Clock::time_point{};
  EXPECT_FALSE(view.take_line(0, progress_line(1, 20, 3.9, 0.1), t));
  EXPECT_FALSE(view.take_line(2, progress_line(1, 20, 3.8, 0.1), t));
  EXPECT_FALSE(view.take_line(0, "2026-11-24 01:02:03.456 info  joined run x", t));
  const auto line = view.take_line(1, progress_line(2, 40, 3.7, 0.2), t);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line,
            "round  1-2 | step    20/300 | loss 3.900 3.700 3.800 | sent MB 0.1 0.2 0.1 | recv MB "
            "0.1 0.2 0.1 | net wait s 0.3 0.3 0.3");
  // The next line waits for everyone again, or for kMaxDelay after the first new report.
  EXPECT_FALSE(view.take_line(0, progress_line(2, 40, 3.5, 0.2), t));
  EXPECT_FALSE(view.poll(t + SwarmView::kMaxDelay - 1ms));
  EXPECT_TRUE(view.poll(t + SwarmView::kMaxDelay).has_value());
  EXPECT_FALSE(view.poll(t + 2 * SwarmView::kMaxDelay));  // nothing new
}

TEST(SwarmView, AnEndedPeerIsNotWaitedFor) {
  SwarmView view(2);
  const auto t = SwarmView::Clock::time_point{};
  view.peer_ended(1, "peer 2 FAILED (killed by signal 9 (Killed)): \"\"; its log: /x/peer-2.log");
  const auto line = view.take_line(0, progress_line(1, 20, 3.9, 0.1), t);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("loss 3.900 -"), std::string::npos) << *line;
}

TEST(SwarmView, SummarySaysWhetherAllPeersHoldTheSameState) {
  SwarmView same(2);
  const auto t = SwarmView::Clock::time_point{};
  same.take_line(0, progress_line(1, 20, 3.9, 0.1), t);
  same.take_line(0, summary_line("aaaaaaaaaaaa", "0123456789abcdef"), t);
  same.take_line(1, summary_line("bbbbbbbbbbbb", "0123456789abcdef"), t);
  EXPECT_TRUE(same.same_state());
  const std::string table = same.summary();
  EXPECT_NE(table.find("all 2 peers hold the same state 0123456789abcdef"), std::string::npos)
      << table;
  EXPECT_NE(table.find("3.9000      1.4321   1.3850        +3.4%"), std::string::npos) << table;

  SwarmView differ(2);
  differ.take_line(0, summary_line("aaaaaaaaaaaa", "0123456789abcdef"), t);
  differ.take_line(1, summary_line("bbbbbbbbbbbb", "fedcba9876543210"), t);
  EXPECT_FALSE(differ.same_state());

  SwarmView failed(2);
  failed.take_line(0, summary_line("aaaaaaaaaaaa", "0123456789abcdef"), t);
  failed.peer_ended(1, "peer 2 FAILED (exit code 1): \"boom\"; its log: /x/peer-2.log");
  EXPECT_FALSE(failed.same_state());
  EXPECT_NE(failed.summary().find("its log: /x/peer-2.log"), std::string::npos);
}

}  // namespace
}  // namespace loco::peer
