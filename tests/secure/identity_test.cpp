#include "loco/secure/identity.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "loco/core/error.hpp"

namespace loco::secure {
namespace {

namespace fs = std::filesystem;

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("loco_identity_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_text(const fs::path& path, const std::string& text, fs::perms perms) {
    std::ofstream(path) << text;
    fs::permissions(path, perms);
  }

  fs::path dir_;
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
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const KeyPair loaded = read_key_file(path);
  EXPECT_EQ(loaded.public_key(), key.public_key());
  const std::uint8_t message[] = {9};
  EXPECT_TRUE(verify(key.public_key(), message, loaded.sign(message)));
}

TEST_F(KeyFileTest, ExistingFileIsKeptUnlessOverwriteIsAsked) {
  const fs::path path = dir_ / "peer.key";
  const KeyPair first = KeyPair::generate();
  write_key_file(path, first, false);
  EXPECT_EQ(category_of([&] { write_key_file(path, KeyPair::generate(), false); }),
            ErrorCategory::io);
  EXPECT_EQ(read_key_file(path).public_key(), first.public_key());
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const KeyPair second = KeyPair::generate();
  write_key_file(path, second, true);
  EXPECT_EQ(read_key_file(path).public_key(), second.public_key());  // mode tightened to 0600
}

TEST_F(KeyFileTest, LoosePermissionsAreRefused) {
  const fs::path path = dir_ / "peer.key";
  write_key_file(path, KeyPair::generate(), false);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  try {
    read_key_file(path);
    FAIL() << "a world-readable key file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    EXPECT_NE(std::string(e.what()).find("chmod 600"), std::string::npos) << e.what();
  }
}

TEST_F(KeyFileTest, MalformedFilesAreRefused) {
  const KeyPair key = KeyPair::generate();
  const fs::path good = dir_ / "good.key";
  write_key_file(good, key, false);
  std::string text;
  {
    std::ifstream in(good);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto owner_only = fs::perms::owner_read | fs::perms::owner_write;
  std::string wrong_public = text;
  const std::string other = to_hex(KeyPair::generate().public_key());
  wrong_public.replace(wrong_public.find("public ") + 7, other.size(), other);
  const std::string cases[] = {
      "",
      "loco-ed25519-key v2\n" + text.substr(text.find('\n') + 1),
      text.substr(0, text.size() - 3) + "\n",
      text + "extra\n",
      wrong_public,
  };
  int index = 0;
  for (const auto& bad : cases) {
    const fs::path path = dir_ / ("bad" + std::to_string(index++) + ".key");
    write_text(path, bad, owner_only);
    EXPECT_EQ(category_of([&] { read_key_file(path); }), ErrorCategory::config) << bad;
  }
  EXPECT_EQ(category_of([&] { read_key_file(dir_ / "missing.key"); }), ErrorCategory::io);
}

}  // namespace
}  // namespace loco::secure
