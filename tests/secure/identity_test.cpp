#include "loco/secure/identity.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"

namespace loco::secure {
namespace {

namespace fs = std::filesystem;

constexpr auto kOwnerOnly = fs::perms::owner_read | fs::perms::owner_write;

class KeyFileTest : public ::testing::Test {
 protected:
  void write_text(const fs::path& path, const std::string& text, fs::perms perms) {
    std::ofstream(path) << text;
    fs::permissions(path, perms);
  }
  std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // Names in the directory: a failed or finished write must leave no temporary file behind.
  std::vector<std::string> entries() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_.path()))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  test::TempDir dir_;
};

ErrorCategory category_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.category();
  }
  ADD_FAILURE() << "no loco::Error thrown";
  return ErrorCategory::invalid_argument;
}

// The error `fn` throws, or a failure if it throws none.
Error error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no loco::Error thrown";
  return Error(ErrorCategory::invalid_argument, "none");
}

bool contains(const Error& e, std::string_view text) {
  return e.message().find(text) != std::string::npos;
}

TEST(Identity, SignaturesVerifyOnlyForTheSignedMessageAndKey) {
  const KeyPair a = KeyPair::generate();
  const KeyPair b = KeyPair::generate();
  EXPECT_NE(a.public_key(), b.public_key());
  const std::uint8_t message[] = {1, 2, 3};
  const Signature sig = a.sign(message);
  EXPECT_TRUE(verify(a.public_key(), message, sig));
  EXPECT_FALSE(verify(b.public_key(), message, sig));
  const std::uint8_t other[] = {1, 2, 4};
  EXPECT_FALSE(verify(a.public_key(), other, sig));
}

// Rings and views are ordered by key on every peer and on the tracker: the order must be that of
// the bytes, whatever word-at-a-time shortcut the comparison takes.
TEST(Identity, PublicKeysOrderAsTheirBytesDo) {
  std::vector<PublicKey> keys;
  for (int i = 0; i < 64; ++i) keys.push_back(KeyPair::generate().public_key());
  PublicKey low = keys[0];
  low.bytes[31] = 0;  // differs from keys[0] only in the last byte, in the last word
  keys.push_back(low);
  PublicKey high = keys[1];
  high.bytes[8] ^= 0x80;  // the second word, by its top bit
  keys.push_back(high);
  for (const PublicKey& a : keys) {
    for (const PublicKey& b : keys) {
      const bool bytes_less = std::ranges::lexicographical_compare(a.bytes, b.bytes);
      EXPECT_EQ(a < b, bytes_less);
      EXPECT_EQ(a == b, a.bytes == b.bytes);
    }
  }
}

TEST(Identity, PeerIdIsStableAndShortFormIsTwelveHexDigits) {
  std::array<std::uint8_t, 32> seed{};
  seed[0] = 7;
  const KeyPair a = KeyPair::from_seed(seed);
  const KeyPair again = KeyPair::from_seed(seed);
  EXPECT_EQ(peer_id(a.public_key()), peer_id(again.public_key()));
  EXPECT_EQ(short_id(a.public_key()).size(), 12u);
  EXPECT_EQ(full_hex(peer_id(a.public_key())).substr(0, 12), short_id(a.public_key()));
  EXPECT_NE(peer_id(a.public_key()), peer_id(KeyPair::generate().public_key()));
}

TEST(Identity, PublicKeyHexRoundTripsAndRejectsTypos) {
  const KeyPair a = KeyPair::generate();
  EXPECT_EQ(parse_public_key(to_hex(a.public_key())), a.public_key());
  std::string typo = to_hex(a.public_key());
  typo[5] = 'g';
  EXPECT_EQ(category_of([&] { parse_public_key(typo); }), ErrorCategory::config);
  EXPECT_EQ(category_of([&] { parse_public_key(typo.substr(1)); }), ErrorCategory::config);
}

TEST_F(KeyFileTest, WrittenFileIsOwnerOnlyAndReadsBackTheSameKey) {
  const KeyPair key = KeyPair::generate();
  const fs::path path = dir_ / "peer.key";
  write_key_file(path, key, false);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, kOwnerOnly);
  EXPECT_EQ(entries(), std::vector<std::string>{"peer.key"});  // no temporary file left
  const KeyPair loaded = read_key_file(path, KeyOwner::peer);
  EXPECT_EQ(loaded.public_key(), key.public_key());
  const std::uint8_t message[] = {9};
  EXPECT_TRUE(verify(key.public_key(), message, loaded.sign(message)));
}

TEST_F(KeyFileTest, ExistingFileIsKeptUnlessOverwriteIsAsked) {
  const fs::path path = dir_ / "peer.key";
  const KeyPair first = KeyPair::generate();
  write_key_file(path, first, false);
  const Error refused = error_of([&] { write_key_file(path, KeyPair::generate(), false); });
  EXPECT_EQ(refused.category(), ErrorCategory::io);
  EXPECT_TRUE(contains(refused, "--force")) << refused.what();
  EXPECT_EQ(read_key_file(path, KeyOwner::peer).public_key(), first.public_key());
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const KeyPair second = KeyPair::generate();
  write_key_file(path, second, true);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, kOwnerOnly);
  EXPECT_EQ(read_key_file(path, KeyOwner::peer).public_key(), second.public_key());
  EXPECT_EQ(entries(), std::vector<std::string>{"peer.key"});  // no temporary file left
}

TEST_F(KeyFileTest, LoosePermissionsAreRefused) {
  const fs::path path = dir_ / "peer.key";
  write_key_file(path, KeyPair::generate(), false);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  const Error e = error_of([&] { read_key_file(path, KeyOwner::peer); });
  EXPECT_EQ(e.category(), ErrorCategory::config);
  EXPECT_TRUE(contains(e, "chmod 600 " + path.string())) << e.what();
  EXPECT_TRUE(contains(e, "0604")) << e.what();
}

TEST_F(KeyFileTest, SymlinkToAValidKeyIsRefused) {
  const fs::path real = dir_ / "real.key";
  write_key_file(real, KeyPair::generate(), false);
  const fs::path link = dir_ / "link.key";
  fs::create_symlink(real, link);
  const Error e = error_of([&] { read_key_file(link, KeyOwner::peer); });
  EXPECT_EQ(e.category(), ErrorCategory::config);
  EXPECT_TRUE(contains(e, "symbolic link")) << e.what();
  EXPECT_TRUE(contains(e, "real path")) << e.what();
}

TEST_F(KeyFileTest, OverwriteReplacesASymlinkAndLeavesItsTargetAlone) {
  const fs::path real = dir_ / "real.key";
  const KeyPair original = KeyPair::generate();
  write_key_file(real, original, false);
  const std::string before = read_text(real);
  const fs::path link = dir_ / "link.key";
  fs::create_symlink(real, link);

  const KeyPair replacement = KeyPair::generate();
  write_key_file(link, replacement, true);
  EXPECT_EQ(read_text(real), before);
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(link)));
  EXPECT_EQ(read_key_file(link, KeyOwner::peer).public_key(), replacement.public_key());
  EXPECT_EQ(read_key_file(real, KeyOwner::peer).public_key(), original.public_key());
}

TEST_F(KeyFileTest, DanglingSymlinkIsRefusedWithoutOverwrite) {
  const fs::path target = dir_ / "nowhere.key";
  const fs::path link = dir_ / "link.key";
  fs::create_symlink(target, link);
  EXPECT_EQ(category_of([&] { write_key_file(link, KeyPair::generate(), false); }),
            ErrorCategory::io);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(fs::symlink_status(target)));
  EXPECT_EQ(entries(), std::vector<std::string>{"link.key"});  // the temporary file is gone
}

TEST_F(KeyFileTest, FifoIsRefusedWithoutHanging) {
  const fs::path path = dir_ / "fifo.key";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto reading = std::async(std::launch::async,
                            [&] { return error_of([&] { read_key_file(path, KeyOwner::peer); }); });
  if (reading.wait_for(std::chrono::seconds(10)) == std::future_status::timeout) {
    ADD_FAILURE() << "reading a FIFO blocked";
    ::close(::open(path.c_str(), O_WRONLY | O_NONBLOCK));  // a writer releases the blocked open
  }
  const Error e = reading.get();
  EXPECT_EQ(e.category(), ErrorCategory::config);
  EXPECT_TRUE(contains(e, "not a regular file")) << e.what();
}

TEST_F(KeyFileTest, DirectoryIsRefused) {
  EXPECT_EQ(category_of([&] { read_key_file(dir_.path(), KeyOwner::peer); }),
            ErrorCategory::config);
  // A path ending in '/' names a directory, not a file to create.
  EXPECT_EQ(category_of([&] { write_key_file(dir_.path() / "", KeyPair::generate(), true); }),
            ErrorCategory::io);
}

TEST_F(KeyFileTest, KeyOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  const fs::path path = dir_ / "peer.key";
  write_key_file(path, KeyPair::generate(), false);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  const Error e = error_of([&] { read_key_file(path, KeyOwner::peer); });
  EXPECT_EQ(e.category(), ErrorCategory::config);
  EXPECT_TRUE(contains(e, "uid 65534")) << e.what();
  EXPECT_TRUE(contains(e, "must belong to the user running loco")) << e.what();
}

TEST_F(KeyFileTest, MalformedFilesAreRefused) {
  const KeyPair key = KeyPair::generate();
  const fs::path good = dir_ / "good.key";
  write_key_file(good, key, false);
  const std::string text = read_text(good);
  const std::string header = text.substr(0, text.find('\n') + 1);
  const std::string public_line = text.substr(header.size(), text.find("seed ") - header.size());
  const std::string seed_line = text.substr(text.find("seed "));
  std::string wrong_public = text;
  const std::string other = to_hex(KeyPair::generate().public_key());
  wrong_public.replace(wrong_public.find("public ") + 7, other.size(), other);
  std::string bad_seed_digit = text;
  bad_seed_digit[text.find("seed ") + 9] = 'x';
  const std::string cases[] = {
      "",
      "loco-ed25519-key v2\n" + public_line + seed_line,
      header + public_line,                                     // two lines
      text.substr(0, text.size() - 3) + "\n",                   // seed too short
      text + "extra\n",                                         // a fourth line
      text + "\n",                                              // an empty fourth line
      header + seed_line + public_line,                         // lines swapped
      header + "public  " + public_line.substr(7) + seed_line,  // two spaces
      bad_seed_digit,
      wrong_public,
      text + std::string(5000, '#'),  // larger than any key file
  };
  int index = 0;
  for (const auto& bad : cases) {
    const fs::path path = dir_ / ("bad" + std::to_string(index++) + ".key");
    write_text(path, bad, kOwnerOnly);
    const Error e = error_of([&] { read_key_file(path, KeyOwner::peer); });
    EXPECT_EQ(e.category(), ErrorCategory::config) << bad;
    EXPECT_TRUE(contains(e, path.string())) << e.what();
  }
  EXPECT_EQ(category_of([&] { read_key_file(dir_ / "missing.key", KeyOwner::peer); }),
            ErrorCategory::io);
  // The last line may lack its newline.
  const fs::path unterminated = dir_ / "unterminated.key";
  write_text(unterminated, text.substr(0, text.size() - 1), kOwnerOnly);
  EXPECT_EQ(read_key_file(unterminated, KeyOwner::peer).public_key(), key.public_key());
}

TEST_F(KeyFileTest, MessagesNameTheProgramThatMakesTheOwnersKey) {
  const fs::path path = dir_ / "bad.key";
  write_text(path, "not a key\n", kOwnerOnly);
  const Error peer = error_of([&] { read_key_file(path, KeyOwner::peer); });
  EXPECT_TRUE(contains(peer, "loco-peer keygen")) << peer.what();
  const Error tracker = error_of([&] { read_key_file(path, KeyOwner::tracker); });
  EXPECT_TRUE(contains(tracker, "loco-tracker keygen")) << tracker.what();
  EXPECT_TRUE(contains(tracker, "backup")) << tracker.what();
  EXPECT_TRUE(contains(tracker, "every peer must update its pinned [tracker] public-key"))
      << tracker.what();
  EXPECT_FALSE(contains(tracker, "loco-peer")) << tracker.what();

  fs::permissions(path, kOwnerOnly | fs::perms::group_read);
  const Error loose = error_of([&] { read_key_file(path, KeyOwner::tracker); });
  EXPECT_TRUE(contains(loose, "chmod 600")) << loose.what();
  EXPECT_TRUE(contains(loose, "loco-tracker keygen")) << loose.what();
  EXPECT_TRUE(contains(loose, "every peer must update its pinned [tracker] public-key"))
      << loose.what();
}

}  // namespace
}  // namespace loco::secure
