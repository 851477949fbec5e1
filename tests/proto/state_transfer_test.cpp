// Fetching a state from several donors in memory: every chunk checked, a donor that lies or dies
// replaced by the others, and a manifest that does not match the tracker's hash refused before
// anything is allocated for it.

#include "loco/proto/state_transfer.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::key;
using namespace std::chrono_literals;

using testing::random_state;

struct Swarm {
  std::vector<std::byte> state;
  std::vector<std::byte> other_half;  // a second part, so the state is read across two spans
  StateManifest manifest;
  std::map<PeerKey, StateServer> donors;
  std::set<PeerKey> dead;
  std::map<PeerKey, int> corrupt_from_chunk;  // a donor that flips a byte from chunk N on
  std::set<PeerKey> slow;                     // a donor whose chunks wait in `held`
  std::vector<std::pair<PeerKey, PeerTransmit>> held;
  std::unique_ptr<StateFetcher> fetcher;
  TimePoint now{};

  Swarm(std::size_t bytes, std::uint32_t chunk, std::size_t donor_count) {
    state = random_state(bytes / 2, 1);
    other_half = random_state(bytes - bytes / 2, 2);
    const StateBytes view(
        {std::span<const std::byte>(state), std::span<const std::byte>(other_half)});
    manifest = make_manifest(12, view, chunk);
    std::vector<PeerKey> keys;
    for (std::size_t i = 0; i < donor_count; ++i) {
      const PeerKey k = key(static_cast<std::uint8_t>(i + 1)).public_key();
      donors[k].serve(manifest, view);
      keys.push_back(k);
    }
    fetcher = std::make_unique<StateFetcher>(FetchConfig{.round = 12,
                                                         .state_hash = manifest.state_hash(),
                                                         .donors = keys,
                                                         .window = 2,
                                                         .patience = 5s},
                                             now);
  }

  std::vector<std::byte> whole() const {
    std::vector<std::byte> all = state;
    all.insert(all.end(), other_half.begin(), other_half.end());
    return all;
  }

  // Moves messages until the fetcher is done, failed or stuck; a dead donor answers nothing.
  void run() {
    for (int guard = 0; guard < 100'000; ++guard)
      if (!step()) return;
  }

  // Moves the fetcher's next message and the answers to it; false if it had none.
  bool step() {
    auto t = fetcher->poll_transmit();
    if (!t) return false;
    if (dead.contains(t->to)) return true;
    StateServer& server = donors.at(t->to);
    server.on_message(key(0).public_key(), t->type, t->body);
    while (auto reply = server.poll_transmit()) {
      if (reply->type == MessageType::state_chunk && corrupt_from_chunk.contains(t->to) &&
          corrupt_from_chunk[t->to]-- <= 0)
        reply->body.back() ^= std::byte{1};
      if (reply->type == MessageType::state_chunk && slow.contains(t->to))
        held.emplace_back(t->to, std::move(*reply));
      else
        fetcher->on_message(now, t->to, reply->type, reply->body);
    }
    return true;
  }

  StateBytes view() const {
    return StateBytes({std::span<const std::byte>(state), std::span<const std::byte>(other_half)});
  }
};

// A state handed over in pieces of any size, across chunk and part boundaries, has the manifest of
// the whole.
TEST(StateTransfer, AManifestBuiltPieceByPieceIsTheManifestOfTheWhole) {
  const std::vector<std::byte> state = random_state(10'000, 3);
  const StateManifest whole = make_manifest(7, StateBytes({std::span(state)}), 1000);
  for (const std::size_t piece : {1u, 999u, 1000u, 1001u, 4096u, 10'000u}) {
    ManifestBuilder builder(7, state.size(), 1000);
    for (std::size_t at = 0; at < state.size(); at += piece)
      builder.add(std::span(state).subspan(at, std::min(piece, state.size() - at)));
    EXPECT_EQ(builder.finish(), whole) << "pieces of " << piece;
  }
  EXPECT_EQ(whole.chunk_count(), 10u);
}

TEST(StateTransfer, AStateComesTogetherFromSeveralDonors) {
  for (const std::size_t bytes : {0, 1, 1000, 10'000, 65'537}) {
    Swarm s(bytes, 1024, 3);
    s.run();
    ASSERT_TRUE(s.fetcher->done()) << bytes << " bytes: " << s.fetcher->failure().value_or("");
    const auto expected = s.whole();
    EXPECT_TRUE(std::equal(s.fetcher->state().begin(), s.fetcher->state().end(), expected.begin(),
                           expected.end()));
    EXPECT_EQ(s.fetcher->bytes_received(), bytes);
    std::uint64_t served = 0;
    for (const auto& [k, d] : s.donors) served += d.bytes_served();
    EXPECT_EQ(served, bytes) << "each chunk fetched once";
  }
}

TEST(StateTransfer, ADonorThatSendsABadChunkIsDroppedAndReported) {
  Swarm s(20'000, 1024, 3);
  const PeerKey liar = key(2).public_key();
  s.corrupt_from_chunk[liar] = 1;
  s.run();
  ASSERT_TRUE(s.fetcher->done()) << s.fetcher->failure().value_or("");
  const auto expected = s.whole();
  EXPECT_TRUE(std::equal(s.fetcher->state().begin(), s.fetcher->state().end(), expected.begin(),
                         expected.end()));
  ASSERT_EQ(s.fetcher->bad_donors().size(), 1u);
  EXPECT_NE(s.fetcher->bad_donors().at(liar).find("does not match the manifest"),
            std::string::npos);
}

// What `loco-peer fetch-model` names as its sources: the donors whose checked chunks make up the
// state, never one whose every chunk was bad.
TEST(StateTransfer, TheDonorsThatServedAreThoseWhoseChunksAreInTheState) {
  Swarm s(20'000, 1024, 3);
  const PeerKey liar = key(2).public_key();
  s.corrupt_from_chunk[liar] = 0;
  s.run();
  ASSERT_TRUE(s.fetcher->done()) << s.fetcher->failure().value_or("");
  EXPECT_EQ(s.fetcher->served_by(), (std::set<PeerKey>{key(1).public_key(), key(3).public_key()}));
  EXPECT_TRUE(s.fetcher->bad_donors().contains(liar));

  Swarm empty(0, 1024, 2);
  empty.run();
  ASSERT_TRUE(empty.fetcher->done());
  EXPECT_TRUE(empty.fetcher->served_by().empty()) << "no chunk, nobody served one";
}

TEST(StateTransfer, ADonorThatDiesMidTransferIsReplaced) {
  Swarm s(20'000, 1024, 2);
  const PeerKey dying = key(1).public_key();
  // Start, then the donor dies with chunks in flight.
  auto first = s.fetcher->poll_transmit();
  ASSERT_TRUE(first);
  s.donors.at(first->to).on_message(key(0).public_key(), first->type, first->body);
  while (auto reply = s.donors.at(first->to).poll_transmit())
    s.fetcher->on_message(s.now, first->to, reply->type, reply->body);
  s.dead.insert(dying);
  s.run();  // requests to the dead donor vanish
  s.fetcher->on_donor_lost(s.now, dying);
  s.run();
  ASSERT_TRUE(s.fetcher->done()) << s.fetcher->failure().value_or("");
  EXPECT_TRUE(s.fetcher->bad_donors().empty()) << "dying is not lying";
}

TEST(StateTransfer, ASilentDonorIsDroppedAfterThePatienceRunsOut) {
  Swarm s(20'000, 1024, 1);
  s.dead.insert(key(1).public_key());
  s.run();
  EXPECT_EQ(s.fetcher->poll_timeout(), s.now + 5s);
  s.fetcher->on_timer(s.now + 5s);
  ASSERT_TRUE(s.fetcher->failure());
  EXPECT_NE(s.fetcher->failure()->find("sent nothing for 5 s"), std::string::npos);
}

TEST(StateTransfer, AManifestOfAnotherStateIsRefusedBeforeAnyAllocation) {
  Swarm s(4096, 1024, 1);
  StateManifest huge = s.manifest;
  huge.total_bytes = 60ull << 30;  // would be 60 GiB
  huge.chunk_bytes = 1 << 20;
  huge.chunk_hashes.assign(60 * 1024, Digest{});
  s.fetcher->on_message(s.now, key(1).public_key(), MessageType::state_manifest,
                        encode_manifest(huge));
  ASSERT_TRUE(s.fetcher->failure());
  EXPECT_NE(s.fetcher->bad_donors().begin()->second.find("manifest of round 12 has state"),
            std::string::npos);
  EXPECT_TRUE(s.fetcher->state().empty());
  // Malformed manifests: counts that disagree with the size, truncation.
  auto body = encode_manifest(s.manifest);
  EXPECT_THROW(decode_manifest(std::span(body).first(body.size() - 1)), Error);
  StateManifest wrong = s.manifest;
  wrong.chunk_hashes.pop_back();
  EXPECT_THROW(decode_manifest(encode_manifest(wrong)), Error);
}

TEST(StateTransfer, AnswersToAnEarlierFetchAreIgnoredNotBlamed) {
  Swarm s(20'000, 1024, 2);
  const PeerKey donor = key(1).public_key();
  // A fetch of round 11 that was given up: its manifest, refusal and chunk arrive late.
  const StateBytes view({std::span<const std::byte>(s.state)});
  const StateManifest earlier = make_manifest(11, view, 1024);
  StateServer old;
  old.serve(earlier, view);
  old.on_message(key(0).public_key(), MessageType::state_request,
                 encode_state_request(11, earlier.state_hash()));
  old.on_message(key(0).public_key(), MessageType::chunk_request, encode_chunk_request(11, 0));
  old.on_message(key(0).public_key(), MessageType::state_request, encode_state_request(10, {}));
  while (auto reply = old.poll_transmit())
    s.fetcher->on_message(s.now, donor, reply->type, reply->body);
  // And round 12's manifest twice: a request of an earlier fetch of the same round answered.
  for (int i = 0; i < 2; ++i)
    s.fetcher->on_message(s.now, donor, MessageType::state_manifest, encode_manifest(s.manifest));
  s.run();
  ASSERT_TRUE(s.fetcher->done()) << s.fetcher->failure().value_or("");
  EXPECT_TRUE(s.fetcher->bad_donors().empty());
}

// The fetch begins as the commit is announced: a donor that has not applied it yet refuses
// ("this peer holds round 11") and is asked once more, half a second later, instead of being
// dropped; the other donor here never answers, so without the second ask the fetch would wait
// for its patience and fail.
TEST(StateTransfer, ADonorThatHasNotAppliedTheCommitYetIsAskedAgain) {
  Swarm s(20'000, 1024, 2);
  const PeerKey behind = key(1).public_key();
  s.dead.insert(key(2).public_key());
  s.donors.at(behind).serve(make_manifest(11, s.view(), 1024), s.view());
  s.run();
  ASSERT_FALSE(s.fetcher->failure());
  EXPECT_EQ(s.fetcher->poll_timeout(), s.now + 500ms);
  s.donors.at(behind).serve(s.manifest, s.view());  // it applies the commit
  s.now += 500ms;
  s.fetcher->on_timer(s.now);
  s.run();
  ASSERT_TRUE(s.fetcher->done()) << s.fetcher->failure().value_or("");
  EXPECT_EQ(s.fetcher->served_by(), std::set<PeerKey>{behind});

  // One more ask only: a donor that refuses twice is dropped.
  Swarm twice(20'000, 1024, 1);
  twice.donors.begin()->second.serve(make_manifest(11, twice.view(), 1024), twice.view());
  twice.run();
  twice.now += 500ms;
  twice.fetcher->on_timer(twice.now);
  twice.run();
  ASSERT_TRUE(twice.fetcher->failure());
  EXPECT_NE(twice.fetcher->failure()->find("this peer holds round 11"), std::string::npos);
}

// A donor on a slow link holds its chunks: once nothing is left to ask for, an idle donor is
// asked for a chunk held for duplicate_after (3 s; the patience here is 5 s), and the slow
// donor's copy that comes later is ignored, not blamed.
TEST(StateTransfer, AChunkHeldByASlowDonorIsAskedOfAnIdleOneAndTheLateCopyIsIgnored) {
  Swarm s(4 * 1024, 1024, 2);  // window 2: each donor is asked for two chunks
  const PeerKey slow = key(1).public_key();
  s.slow.insert(slow);
  s.run();
  ASSERT_EQ(s.held.size(), 2u);
  ASSERT_FALSE(s.fetcher->done());
  EXPECT_EQ(s.fetcher->poll_timeout(), s.now + 3s) << "the held chunks are late then";
  s.now += 3s;
  s.fetcher->on_timer(s.now);
  ASSERT_TRUE(s.step());  // the other donor sends the first held chunk
  ASSERT_FALSE(s.fetcher->done());
  // The slow donor's copy of that chunk arrives now, before the fetch is done.
  const auto& [from, late] = s.held.front();
  s.fetcher->on_message(s.now, from, late.type, late.body);
  s.run();
  ASSERT_TRUE(s.fetcher->done()) << s.fetcher->failure().value_or("");
  EXPECT_TRUE(std::ranges::equal(s.fetcher->state(), s.whole()));
  EXPECT_TRUE(s.fetcher->bad_donors().empty()) << "slow is not lying";
  EXPECT_EQ(s.fetcher->served_by(), std::set<PeerKey>{key(2).public_key()});
}

TEST(StateTransfer, ADonorRefusesRoundsAndStatesItDoesNotHold) {
  Swarm s(4096, 1024, 1);
  StateServer& server = s.donors.begin()->second;
  server.on_message(key(9).public_key(), MessageType::state_request,
                    encode_state_request(11, s.manifest.state_hash()));
  auto reply = server.poll_transmit();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->type, MessageType::state_refusal);
  EXPECT_THROW(server.on_message(key(9).public_key(), MessageType::chunk_request,
                                 encode_chunk_request(12, 999)),
               Error);
}

// A member that asks for the same chunks again and again (~20 bytes a request, a chunk back) is
// sent the state twice over, then refused until the donor serves its next state; another
// requester still gets its share.
TEST(StateTransfer, ADonorSendsOneRequesterTheStateAtMostTwiceOver) {
  Swarm s(8192, 1024, 1);
  StateServer& server = s.donors.begin()->second;
  const auto ask = [&](std::uint8_t who, int chunks) {
    std::uint64_t sent = 0, refused = 0;
    server.on_message(key(who).public_key(), MessageType::state_request,
                      encode_state_request(12, s.manifest.state_hash()));
    for (int i = 0; i < chunks; ++i)
      server.on_message(key(who).public_key(), MessageType::chunk_request,
                        encode_chunk_request(12, static_cast<std::uint64_t>(i) % 8));
    while (auto reply = server.poll_transmit()) {
      if (reply->type == MessageType::state_chunk) sent += reply->body.size();
      refused += reply->type == MessageType::state_refusal;
    }
    return std::pair{sent, refused};
  };
  const auto [greedy_sent, greedy_refused] = ask(9, 1000);
  EXPECT_LE(greedy_sent, 2 * (8192 + 8 * 32u)) << "the state twice, with the chunks' headers";
  EXPECT_GE(greedy_sent, 2 * 8192u);
  EXPECT_GE(greedy_refused, 1000u - 16u);
  const auto [other_sent, other_refused] = ask(10, 8);
  EXPECT_GE(other_sent, 8192u) << "another requester's share is its own";
  EXPECT_EQ(other_refused, 0u);
  server.serve(s.manifest, StateBytes({std::span<const std::byte>(s.state),
                                       std::span<const std::byte>(s.other_half)}));
  EXPECT_EQ(ask(9, 8).second, 0u) << "a new state served: a new share";
}

}  // namespace
}  // namespace loco::proto
