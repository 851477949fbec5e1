// A peer's data shard fetched while it trains (loco/fetch/shard_feed.hpp), from a real HTTP server
// (tests/support/slow_mirror.py): only the manifest shards the data shard maps to, offered a
// checked shard at a time; a new assignment's shards after the old ones; a first shard that fails
// its hash everywhere, or a shard that does not fit under the cap, stops the feed with an error
// naming it; a later one stalls it, tried again until a source gives it.

#include "loco/fetch/shard_feed.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "../support/child_process.hpp"
#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"

namespace loco::fetch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Token i of the train split is i % 251 (byte-level: vocabulary 256).
constexpr std::uint16_t token_at(std::uint64_t i) {
  return static_cast<std::uint16_t>(i % 251);
}

// A byte-level dataset of 4 train shards of 1,000 tokens and one validation shard; its hash.
std::string write_dataset(const fs::path& folder) {
  fs::create_directories(folder);
  data::DatasetManifest m;
  m.shard_tokens = 1000;
  const auto shard = [&](const std::string& name, std::uint64_t first) {
    std::vector<std::uint16_t> tokens(1000);
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = token_at(first + i);
    const auto bytes = std::as_bytes(std::span(tokens));
    std::ofstream(folder / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return data::DatasetFile{
        .name = name, .tokens = 1000, .bytes = bytes.size(), .blake2b = blake2b(bytes)};
  };
  for (int k = 0; k < 4; ++k)
    m.train.push_back(shard("train-0000" + std::to_string(k) + ".bin", k * 1000));
  m.validation.push_back(shard("val-00000.bin", 0));
  const std::string text = data::encode_manifest(m);
  std::ofstream(folder / "manifest.txt", std::ios::binary) << text;
  return to_hex(blake2b(std::as_bytes(std::span(text))));
}

// The test's mirror of `folder`, at full speed.
struct Mirror {
  explicit Mirror(const fs::path& folder, const fs::path& log)
      : process({LOCO_SOURCE_DIR "/tests/support/slow_mirror.py", folder.string(), "none", "1"},
                log) {
    const std::string line = process.read_line();
    url = line.substr(line.find("http://"));
  }
  test::ChildProcess process;
  std::string url;
};

// Waits for offers until one holds all of its shard.
ShardFeed::Held wait_whole(ShardFeed& feed) {
  const std::atomic<bool> never{false};
  for (;;) {
    std::optional<ShardFeed::Held> held = feed.wait(never);
    EXPECT_TRUE(held.has_value());
    if (!held) return {};
    EXPECT_EQ(held->tokens.tokens.size() % 1000, 0u);  // whole manifest shards only
    for (std::size_t i = 0; i < held->tokens.tokens.size(); ++i)
      if (held->tokens.tokens[i] != token_at(held->tokens.first + i)) {
        ADD_FAILURE() << "token " << held->tokens.first + i << " is not the file's";
        return *held;
      }
    if (held->whole) return *held;
  }
}

struct Fixture {
  Fixture() : hash(write_dataset(dir / "data")), mirror(dir / "data", dir / "mirror.log") {}
  DatasetFetch plan(std::uint64_t cap = 1 << 20) const {
    return {
        .sources = {mirror.url}, .cache = dir / "cache", .manifest_hash = hash, .max_bytes = cap};
  }
  fs::path cached(const std::string& name) const {
    return dir / "cache" / hash.substr(0, 16) / name;
  }
  test::TempDir dir;
  std::string hash;
  Mirror mirror;
};

TEST(ShardFeed, FetchesOnlyTheAssignedShardsAndMovesToANewAssignment) {
  Fixture f;
  ShardFeed feed(f.plan());
  EXPECT_TRUE(fs::exists(f.cached("val-00000.bin")));  // before any assignment
  EXPECT_FALSE(fs::exists(f.cached("train-00000.bin")));
  EXPECT_FALSE(feed.poll().has_value());

  feed.assign({0, 2});  // tokens [0, 2000): shards 0 and 1
  const ShardFeed::Held first = wait_whole(feed);
  EXPECT_EQ(first.tokens.first, 0u);
  EXPECT_EQ(first.tokens.tokens.size(), 2000u);
  EXPECT_EQ(first.tokens.total, 4000u);
  EXPECT_TRUE(fs::exists(f.cached("train-00001.bin")));
  EXPECT_FALSE(fs::exists(f.cached("train-00002.bin")));

  feed.assign({1, 2});  // the tracker moved the peer: tokens [2000, 4000)
  const ShardFeed::Held second = wait_whole(feed);
  EXPECT_EQ(second.shard, (data::ShardSpec{1, 2}));
  EXPECT_EQ(second.tokens.first, 2000u);
  EXPECT_EQ(second.tokens.tokens.size(), 2000u);
  // The old shard's tokens stay readable for as long as the loop holds them.
  EXPECT_EQ(first.tokens.tokens[1999], token_at(1999));
}

TEST(ShardFeed, AFirstShardFailingItsHashEverywhereStopsTheFeedNamingIt) {
  Fixture f;
  std::fstream(f.dir / "data" / "train-00000.bin", std::ios::in | std::ios::out | std::ios::binary)
      .put('\x7f');
  ShardFeed feed(f.plan());
  feed.assign({0, 1});
  const std::atomic<bool> never{false};
  try {
    for (;;)
      if (const auto held = feed.wait(never); held && held->whole) break;
    ADD_FAILURE() << "a corrupted shard was offered";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::network);
    EXPECT_THAT(e.message(), HasSubstr("train-00000.bin' whole and checked"));
  }
  EXPECT_FALSE(fs::exists(f.cached("train-00000.bin")));
}

TEST(ShardFeed, ALaterShardNoSourceGivesStallsTheFeedWhichTriesAgainUntilItComes) {
  Fixture f;
  std::fstream(f.dir / "data" / "train-00001.bin", std::ios::in | std::ios::out | std::ios::binary)
      .put('\x7f');
  ShardFeed feed(f.plan(), std::chrono::milliseconds(200));
  feed.assign({0, 1});
  const std::atomic<bool> never{false};
  // The first shard is offered; the second fails everywhere: the feed says so and waits.
  const std::optional<ShardFeed::Held> first = feed.wait(never);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tokens.tokens.size(), 1000u);
  EXPECT_FALSE(first->whole);
  EXPECT_FALSE(feed.wait(never).has_value());  // the stall's news
  const std::optional<std::string> why = feed.stalled();
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(*why, HasSubstr("train-00001.bin' whole and checked"));
  EXPECT_FALSE(fs::exists(f.cached("train-00001.bin")));
  // The mirror gets a good copy: a later try fetches it, and the rest follows.
  write_dataset(f.dir / "data");
  const ShardFeed::Held whole = wait_whole(feed);
  EXPECT_EQ(whole.tokens.tokens.size(), 4000u);
  EXPECT_FALSE(feed.stalled().has_value());
}

TEST(ShardFeed, AShardOverTheCapBesideTheFilesInUseStopsTheFeed) {
  Fixture f;
  // The manifest and validation shard fit (about 2.4 KB), one more 2 KB shard does not.
  ShardFeed feed(f.plan(4000));
  feed.assign({0, 1});
  const std::atomic<bool> never{false};
  try {
    for (;;)
      if (const auto held = feed.wait(never); held && held->whole) break;
    ADD_FAILURE() << "a shard was fetched past the cap";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::resource);
  }
  EXPECT_FALSE(fs::exists(f.cached("train-00000.bin.part")));
}

}  // namespace
}  // namespace loco::fetch
