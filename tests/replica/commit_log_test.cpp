// A replica's commit log entries (replica/commit_log.hpp): their keys sort by round, an entry
// comes back as it was written, a malformed one is refused, and a save logs exactly the rounds
// it commits.

#include "loco/replica/commit_log.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"

namespace loco::replica {
namespace {

Digest digest_of(std::uint8_t first) {
  Digest d{};
  d[0] = first;
  d[31] = 0xfe;
  return d;
}

CommitLogEntry an_entry() {
  return {.round = 12,
          .state_hash = digest_of(0x0c),
          .group_size = 4,
          .epoch = (std::uint64_t{1} << 33) + 2,
          .members = 5,
          .members_hash = digest_of(0xa5),
          .unix_ms = 1764412345678};
}

TEST(CommitLog, KeysSortByRoundAndAnEntryComesBack) {
  EXPECT_EQ(commit_log_key("/loco/run/", 12), "/loco/run/rounds/00000000000000000012");
  EXPECT_LT(commit_log_key("/loco/run/", 9), commit_log_key("/loco/run/", 10));
  const std::string text = encode_commit_entry(an_entry());
  EXPECT_NE(text.find(R"("round":12,"state":"0c00)"), std::string::npos) << text;
  EXPECT_EQ(decode_commit_entry(text), an_entry());
}

TEST(CommitLog, AMalformedEntryIsRefused) {
  const std::string good = encode_commit_entry(an_entry());
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::string bad[] = {
      "",
      "[]",
      "{}",
      good.substr(0, good.size() - 1),                       // cut short
      replaced(R"("round":12)", R"("round":-12)"),           // negative
      replaced(R"("round":12)", R"("round":"12")"),          // a string
      replaced(R"("group":4)", R"("group":4294967296)"),     // past 32 bits
      replaced(R"("state":"0c)", R"("state":"zz)"),          // not hex
      replaced(R"("state":"0c)", R"("state":"0)"),           // 63 digits
      replaced(R"("unix_ms")", R"("unix_ms":1,"unix_ms")"),  // a key twice
      R"({"round":)" + std::string(2000, '1') + "}",         // over the size an entry takes
  };
  for (const std::string& text : bad) {
    try {
      decode_commit_entry(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::format) << text;
    }
  }
}

proto::TrackerSnapshot history_to(std::uint64_t round) {
  proto::TrackerSnapshot s;
  s.run_id = "run";
  s.epoch = 7;
  s.committed_round = round;
  s.committed_hash = digest_of(static_cast<std::uint8_t>(round));
  for (std::uint64_t r = 1; r <= round; ++r)
    s.history.push_back({.round = r,
                         .unix_ms = 100 + r,
                         .group_size = 3,
                         .mean_loss = 1.5f,
                         .state_hash = digest_of(static_cast<std::uint8_t>(r))});
  return s;
}

std::vector<std::uint64_t> rounds(const std::vector<CommitLogEntry>& entries) {
  std::vector<std::uint64_t> out;
  for (const CommitLogEntry& e : entries) out.push_back(e.round);
  return out;
}

TEST(CommitLog, ASaveLogsTheRoundsItCommitsAndNoOther) {
  EXPECT_TRUE(new_commits(history_to(0), 0).empty());  // a new run
  EXPECT_TRUE(new_commits(history_to(5), 5).empty());  // saved again: a change of members
  EXPECT_TRUE(new_commits(history_to(3), 5).empty());  // the run went back: nothing new
  const auto one = new_commits(history_to(6), 5);
  ASSERT_EQ(rounds(one), (std::vector<std::uint64_t>{6}));
  EXPECT_EQ(one[0].state_hash, digest_of(6));
  EXPECT_EQ(one[0].group_size, 3u);
  EXPECT_EQ(one[0].unix_ms, 106u);
  EXPECT_EQ(one[0].epoch, 7u);
  EXPECT_EQ(rounds(new_commits(history_to(8), 5)), (std::vector<std::uint64_t>{6, 7, 8}));

  // Settled on a round no group committed here: logged from the committed hash alone.
  proto::TrackerSnapshot settled = history_to(5);
  settled.committed_round = 9;
  settled.committed_hash = digest_of(9);
  const auto from_hash = new_commits(settled, 5);
  ASSERT_EQ(rounds(from_hash), (std::vector<std::uint64_t>{9}));
  EXPECT_EQ(from_hash[0].state_hash, digest_of(9));
  EXPECT_EQ(from_hash[0].group_size, 0u);
}

}  // namespace
}  // namespace loco::replica
