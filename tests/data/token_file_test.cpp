#include "loco/data/token_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"

namespace loco::data {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

void write_raw(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Runs `open` and returns the Error it throws (failing the test if it throws nothing).
template <typename F>
Error error_of(F&& open) {
  try {
    open();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected loco::Error";
  return Error(ErrorCategory::invalid_argument, "none");
}

TEST(TokenFile, RoundTripsThroughMmap) {
  test::TempDir dir;
  std::vector<std::uint16_t> tokens;
  for (std::uint32_t i = 0; i < 70'000; ++i) tokens.push_back(static_cast<std::uint16_t>(i * 7));
  write_token_file(dir / "t.bin", tokens);
  EXPECT_EQ(std::filesystem::file_size(dir / "t.bin"), tokens.size() * 2);

  TokenFile file(dir / "t.bin", 65536);
  ASSERT_EQ(file.tokens().size(), tokens.size());
  EXPECT_TRUE(std::equal(tokens.begin(), tokens.end(), file.tokens().begin()));

  TokenFile moved = std::move(file);  // the mapping moves with it
  EXPECT_EQ(moved.tokens()[1], 7);
}

TEST(TokenFile, IsLittleEndianUint16) {
  test::TempDir dir;
  write_raw(dir / "t.bin", std::string("\x01\x00\x00\x01\xff\x00", 6));
  TokenFile file(dir / "t.bin", 256 + 1);
  EXPECT_EQ(std::vector<std::uint16_t>(file.tokens().begin(), file.tokens().end()),
            (std::vector<std::uint16_t>{1, 256, 255}));
}

TEST(TokenFile, RejectsOddLength) {
  test::TempDir dir;
  write_raw(dir / "odd.bin", std::string("\x01\x00\x02", 3));
  const Error e = error_of([&] { TokenFile(dir / "odd.bin", 256); });
  EXPECT_EQ(e.category(), ErrorCategory::format);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("odd.bin"), HasSubstr("odd length (3 bytes)")));
}

TEST(TokenFile, RejectsTokenOutsideVocabularyNamingItsPosition) {
  test::TempDir dir;
  std::vector<std::uint16_t> tokens(1000, 5);
  tokens[617] = 256;
  write_token_file(dir / "big.bin", tokens);
  const Error e = error_of([&] { TokenFile(dir / "big.bin", 256); });
  EXPECT_EQ(e.category(), ErrorCategory::format);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("big.bin"), HasSubstr("token 256 at position 617"),
                              HasSubstr("vocabulary of 256")));
  EXPECT_NO_THROW(TokenFile(dir / "big.bin", 257));
}

TEST(TokenFile, RejectsEmptyMissingAndNonRegularFiles) {
  test::TempDir dir;
  write_raw(dir / "empty.bin", "");
  Error e = error_of([&] { TokenFile(dir / "empty.bin", 256); });
  EXPECT_EQ(e.category(), ErrorCategory::format);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("empty.bin"), HasSubstr("is empty")));

  e = error_of([&] { TokenFile(dir / "missing.bin", 256); });
  EXPECT_EQ(e.category(), ErrorCategory::io);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("missing.bin"), HasSubstr("cannot open")));

  e = error_of([&] { TokenFile(dir.path(), 256); });
  EXPECT_EQ(e.category(), ErrorCategory::format);
  EXPECT_THAT(e.what(), HasSubstr("not a regular file"));
}

TEST(TokenFile, WriteToUnwritablePathIsIoError) {
  test::TempDir dir;
  const std::vector<std::uint16_t> tokens = {1, 2};
  const Error e = error_of([&] { write_token_file(dir / "no-such-dir" / "t.bin", tokens); });
  EXPECT_EQ(e.category(), ErrorCategory::io);
}

}  // namespace
}  // namespace loco::data
