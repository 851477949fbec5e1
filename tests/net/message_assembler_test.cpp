#include "loco/net/message_assembler.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"

namespace loco::net {
namespace {

using Bytes = std::vector<std::byte>;

std::optional<std::uint64_t> up_to_1_mib(std::uint16_t type) {
  if (type != 7) return std::nullopt;
  return std::uint64_t{1} << 20;
}

BundleChunk piece(std::uint64_t sequence, std::uint64_t size, std::uint64_t offset,
                  const Bytes& data, bool completes) {
  return BundleChunk{.sequence = sequence,
                     .message_type = 7,
                     .message_size = size,
                     .offset = offset,
                     .data = data,
                     .completes_message = completes};
}

TEST(MessageAssembler, HoldsWhatArrivedNotWhatTheFirstPieceAnnounced) {
  MessageAssembler assembler(up_to_1_mib, 64 << 10);
  const Bytes part(1000, std::byte{1});
  // A 1 MiB message announced, 1,000 bytes of it sent: 1,000 bytes held.
  EXPECT_FALSE(assembler.add(piece(0, 1 << 20, 0, part, false)));
  EXPECT_EQ(assembler.buffered(), 1000u);
  EXPECT_FALSE(assembler.add(piece(0, 1 << 20, 1000, part, false)));
  EXPECT_EQ(assembler.buffered(), 2000u);
}

TEST(MessageAssembler, APeerThatWouldGoAboveTheCapIsRefused) {
  MessageAssembler assembler(up_to_1_mib, 4096);
  const Bytes part(3000, std::byte{1});
  EXPECT_FALSE(assembler.add(piece(0, 1 << 20, 0, part, false)));
  try {
    assembler.add(piece(0, 1 << 20, 3000, part, false));
    FAIL() << "6,000 bytes held against a cap of 4,096";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::resource);
    EXPECT_NE(std::string(e.what()).find("above this connection's limit of 4096 bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST(MessageAssembler, ACompleteMessageGivesItsBytesBack) {
  MessageAssembler assembler(up_to_1_mib, 8192);
  Bytes first(3000), second(2000);
  for (std::size_t i = 0; i < first.size(); ++i) first[i] = static_cast<std::byte>(i);
  for (std::size_t i = 0; i < second.size(); ++i) second[i] = static_cast<std::byte>(i + 3000);
  // Pieces out of order, as a bundle's streams deliver them.
  EXPECT_FALSE(assembler.add(piece(4, 5000, 3000, second, false)));
  const auto whole = assembler.add(piece(4, 5000, 0, first, true));
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->type, 7);
  ASSERT_EQ(whole->bytes.size(), 5000u);
  for (std::size_t i = 0; i < 5000; ++i) ASSERT_EQ(whole->bytes[i], static_cast<std::byte>(i)) << i;
  EXPECT_EQ(assembler.buffered(), 0u);
  // A message in one piece is handed on without being held.
  const auto small = assembler.add(piece(5, 3000, 0, first, true));
  ASSERT_TRUE(small);
  EXPECT_EQ(small->bytes, first);
  EXPECT_EQ(assembler.buffered(), 0u);
}

TEST(MessageAssembler, AMessageAboveItsTypesLimitOrOfAnotherTypeIsRefused) {
  MessageAssembler assembler(up_to_1_mib, 1 << 20);
  const Bytes part(10);
  EXPECT_THROW(assembler.add(piece(0, (1 << 20) + 1, 0, part, false)), Error);
  BundleChunk other = piece(1, 10, 0, part, true);
  other.message_type = 8;
  EXPECT_THROW(assembler.add(other), Error);
}

}  // namespace
}  // namespace loco::net
