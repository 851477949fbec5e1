// The all-gather in memory: world sizes 1, 2, 3 and 5, parts of different sizes including empty
// ones, messages delivered in a random interleaving. Every member must end with every member's
// part, the same bytes in the same order, having sent the bytes the cost model says; a member
// missing at the deadline is named by all, and the retry with the survivors agrees; malformed
// parts are refused naming their sender.

#include "loco/proto/all_gather.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <map>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/message_type.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::key;
using namespace std::chrono_literals;

const TimePoint kDeadline = TimePoint(10s);

std::vector<PeerKey> members_of(const std::vector<std::uint8_t>& ids) {
  std::vector<PeerKey> members;
  for (const std::uint8_t id : ids) members.push_back(key(id).public_key());
  return members;
}

std::vector<std::byte> part_of(std::size_t member, std::size_t size) {
  std::vector<std::byte> part(size);
  for (std::size_t i = 0; i < size; ++i) part[i] = static_cast<std::byte>(member * 31 + i);
  return part;
}

struct AllGatherHarness {
  std::vector<PeerKey> members;
  std::vector<std::vector<std::byte>> own;
  std::vector<std::unique_ptr<AllGather>> nodes;
  std::map<std::pair<std::size_t, std::size_t>, std::deque<std::vector<std::byte>>> links;

  AllGatherHarness(const std::vector<std::uint8_t>& ids, const std::vector<std::size_t>& sizes,
                   std::uint32_t attempt = 1)
      : members(members_of(ids)) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      own.push_back(part_of(ids[i], sizes[i]));
      nodes.push_back(std::make_unique<AllGather>(AllGatherConfig{.round = 7,
                                                                  .attempt = attempt,
                                                                  .members = members,
                                                                  .self = i,
                                                                  .max_part_bytes = 4096,
                                                                  .deadline = kDeadline},
                                                  own[i]));
    }
  }

  std::size_t index_of(const PeerKey& k) const {
    return static_cast<std::size_t>(std::find(members.begin(), members.end(), k) - members.begin());
  }
  void collect(std::size_t i) {
    while (auto t = nodes[i]->poll_transmit()) links[{i, index_of(t->to)}].push_back(t->body);
  }
  // Starts the members not in `silent`, then delivers everything, one message at a time from a
  // link picked at random.
  void run(std::uint64_t seed, const std::vector<std::size_t>& silent = {}) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (std::find(silent.begin(), silent.end(), i) != silent.end()) continue;
      nodes[i]->start();
      collect(i);
    }
    Rng rng(seed);
    for (;;) {
      std::vector<std::pair<std::size_t, std::size_t>> busy;
      for (auto& [link, queue] : links)
        if (!queue.empty()) busy.push_back(link);
      if (busy.empty()) return;
      const auto [from, to] = busy[rng.below(busy.size())];
      const auto body = std::move(links[{from, to}].front());
      links[{from, to}].pop_front();
      nodes[to]->on_message(members[from], body);
      collect(to);
    }
  }
};

TEST(AllGather, EveryMemberEndsWithEveryPartInMemberOrder) {
  std::uint64_t seed = 1;
  for (const std::size_t n : {1, 2, 3, 5}) {
    for (const bool empty : {false, true}) {
      SCOPED_TRACE(::testing::Message() << n << " members, " << (empty ? "empty" : "mixed"));
      std::vector<std::uint8_t> ids;
      std::vector<std::size_t> sizes;
      for (std::size_t i = 0; i < n; ++i) {
        ids.push_back(static_cast<std::uint8_t>(i + 1));
        sizes.push_back(empty ? 0 : (i * 37) % 100);  // member 0's is empty anyway
      }
      AllGatherHarness group(ids, sizes);
      group.run(seed++);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(group.nodes[i]->done()) << "member " << i;
        EXPECT_EQ(group.nodes[i]->parts(), group.own) << "member " << i;
        EXPECT_EQ(group.nodes[i]->poll_timeout(), kNever);
        // Cost: its own part, with the header, to each of the N − 1 others.
        EXPECT_EQ(group.nodes[i]->bytes_sent(),
                  (n - 1) * (AllGatherConfig::kHeaderBytes + sizes[i]));
      }
    }
  }
}

// Member 2 of 3 never sends. The other two do not finish, and at the deadline (not before) each
// fails naming member 2. Attempt 2 with the two survivors completes, with the same parts on both.
TEST(AllGather, AMemberMissingAtTheDeadlineIsLeftOutByEveryoneThroughTheRetry) {
  AllGatherHarness first({1, 2, 3}, {10, 20, 30});
  first.run(5, /*silent=*/{2});
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(first.nodes[i]->done());
    EXPECT_EQ(first.nodes[i]->poll_timeout(), kDeadline);
    first.nodes[i]->handle_timeout(kDeadline - 1ns);
    EXPECT_FALSE(first.nodes[i]->failure().has_value()) << "not before the deadline";
    first.nodes[i]->handle_timeout(kDeadline);
    ASSERT_TRUE(first.nodes[i]->failure().has_value());
    EXPECT_EQ(first.nodes[i]->failure()->missing, std::vector<std::size_t>{2});
    EXPECT_EQ(first.nodes[i]->failure()->suspect, key(3).public_key());
    EXPECT_NE(first.nodes[i]->failure()->reason.find("1 of 3 parts missing"), std::string::npos)
        << first.nodes[i]->failure()->reason;
    EXPECT_EQ(first.nodes[i]->poll_timeout(), kNever);
  }
  AllGatherHarness retry({1, 2}, {10, 20}, /*attempt=*/2);
  retry.run(6);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(retry.nodes[i]->done());
    EXPECT_EQ(retry.nodes[i]->parts(), retry.own);
  }
}

std::vector<std::byte> message(std::uint64_t round, std::uint32_t attempt, std::uint32_t index,
                               std::uint32_t size, std::size_t carried, std::uint8_t version = 1) {
  ByteWriter w;
  w.u8(version);
  w.u64(round);
  w.u32(attempt);
  w.u32(index);
  w.u32(size);
  w.bytes(part_of(index, carried));
  return w.finish();
}

TEST(AllGather, MalformedPartsAreRefusedNamingTheSender) {
  const PeerKey from = key(2).public_key();
  struct Case {
    std::vector<std::byte> body;
    PeerKey sender;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{}, from, "all-gather part is malformed"},
      {message(7, 1, 1, 4, 4, /*version=*/2), from, "where this build speaks"},
      {message(8, 1, 1, 4, 4), from, "round 8 attempt 1, this is round 7 attempt 1"},
      {message(7, 0, 1, 4, 4), from, "round 7 attempt 0"},
      {message(7, 1, 2, 4, 4), from, "member index 2 of 3, which is not its sender"},
      {message(7, 1, 9, 4, 4), from, "member index 9 of 3"},
      {message(7, 1, 1, 4, 4), key(9).public_key(), "which is not its sender"},
      {message(7, 1, 1, 5000, 5000), from, "above the limit of 4096"},
      {message(7, 1, 1, 4, 3), from, "declares 4 bytes and carries 3"},
      {message(7, 1, 1, 4, 5), from, "declares 4 bytes and carries 5"},
      {message(7, 1, 1, 0xFFFFFFFF, 0), from, "above the limit"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.says);
    AllGatherHarness group({1, 2, 3}, {4, 4, 4});
    group.nodes[0]->start();
    group.nodes[0]->on_message(c.sender, c.body);
    ASSERT_TRUE(group.nodes[0]->failure().has_value());
    EXPECT_NE(group.nodes[0]->failure()->reason.find(c.says), std::string::npos)
        << group.nodes[0]->failure()->reason;
    EXPECT_EQ(group.nodes[0]->failure()->suspect, c.sender);
    EXPECT_FALSE(group.nodes[0]->poll_transmit().has_value()) << "nothing more is sent";
  }
  // The same part twice.
  AllGatherHarness group({1, 2, 3}, {4, 4, 4});
  group.nodes[0]->start();
  group.nodes[0]->on_message(from, message(7, 1, 1, 4, 4));
  EXPECT_FALSE(group.nodes[0]->failure().has_value());
  group.nodes[0]->on_message(from, message(7, 1, 1, 4, 4));
  ASSERT_TRUE(group.nodes[0]->failure().has_value());
  EXPECT_NE(group.nodes[0]->failure()->reason.find("a second part from member 1"),
            std::string::npos);
}

TEST(AllGather, APartsRoundAndAttemptAreReadBeforeItsCollectiveExists) {
  EXPECT_EQ(all_gather_part_id(message(7, 3, 1, 4, 4)), std::pair(std::uint64_t{7}, 3u));
  // The header alone is enough; anything shorter, or of another version, is malformed.
  const std::vector<std::byte> whole = message(7, 3, 1, 0, 0);
  EXPECT_EQ(all_gather_part_id(std::span(whole).first(13)), std::pair(std::uint64_t{7}, 3u));
  EXPECT_THROW(all_gather_part_id(std::span(whole).first(12)), Error);
  EXPECT_THROW(all_gather_part_id({}), Error);
  EXPECT_THROW(all_gather_part_id(message(7, 3, 1, 4, 4, /*version=*/2)), Error);
}

TEST(AllGather, ItNeedsALinkOnlyToMembersWhosePartHasNotArrived) {
  AllGatherHarness group({1, 2, 3}, {4, 4, 4});
  group.nodes[0]->start();
  EXPECT_FALSE(group.nodes[0]->needs_link_to(key(1).public_key())) << "itself";
  EXPECT_TRUE(group.nodes[0]->needs_link_to(key(2).public_key()));
  EXPECT_TRUE(group.nodes[0]->needs_link_to(key(3).public_key()));
  EXPECT_FALSE(group.nodes[0]->needs_link_to(key(9).public_key())) << "not a member";
  group.nodes[0]->on_message(key(2).public_key(), message(7, 1, 1, 4, 4));
  EXPECT_FALSE(group.nodes[0]->needs_link_to(key(2).public_key())) << "its part is in";
  EXPECT_TRUE(group.nodes[0]->needs_link_to(key(3).public_key()));
}

TEST(AllGather, AnOwnPartAboveTheLimitFailsWithoutSending) {
  AllGatherHarness group({1, 2}, {5000, 4});
  group.nodes[0]->start();
  ASSERT_TRUE(group.nodes[0]->failure().has_value());
  EXPECT_NE(group.nodes[0]->failure()->reason.find("own part of 5000 bytes is above the limit"),
            std::string::npos);
  EXPECT_FALSE(group.nodes[0]->failure()->suspect.has_value());
  EXPECT_FALSE(group.nodes[0]->poll_transmit().has_value());
}

TEST(AllGather, ItsMessageTypeHasAVersionAndALimit) {
  const auto entry = message_info(static_cast<std::uint16_t>(MessageType::all_gather_part));
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->version, 1);
  EXPECT_EQ(entry->route, Route::peer_to_peer);
  EXPECT_EQ(max_all_gather_part_bytes() + AllGatherConfig::kHeaderBytes, entry->max_bytes);
}

}  // namespace
}  // namespace loco::proto
