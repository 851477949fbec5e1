#include "loco/core/arena.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "loco/core/arena_maps.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"

namespace loco {
namespace {

std::shared_ptr<const ArenaLayout> small_layout() {
  return std::make_shared<const ArenaLayout>(std::vector<TensorSpec>{
      {"wte", {5, 3}},  // 15 floats -> padded to 16
      {"bias", {17}},   // 17 floats -> padded to 32
      {"scale", {}},    // scalar
      {"conv", {2, 3, 4}},
  });
}

TEST(ArenaLayout, OffsetsAreAlignedAndPacked) {
  const auto layout = small_layout();
  ASSERT_EQ(layout->tensor_count(), 4u);
  EXPECT_EQ(layout->tensor(0).offset, 0u);
  EXPECT_EQ(layout->tensor(1).offset, 16u);
  EXPECT_EQ(layout->tensor(2).offset, 48u);
  EXPECT_EQ(layout->tensor(3).offset, 64u);
  EXPECT_EQ(layout->tensor(2).numel, 1u);
  EXPECT_EQ(layout->tensor(3).numel, 24u);
  EXPECT_EQ(layout->size(), 96u);
  EXPECT_EQ(layout->parameter_count(), 15u + 17u + 1u + 24u);
  for (const auto& t : layout->tensors()) {
    EXPECT_EQ(t.offset % ArenaLayout::kAlignFloats, 0u) << t.name;
  }
}

TEST(ArenaLayout, RejectsBadSpecs) {
  EXPECT_THROW(ArenaLayout({{"a", {2}}, {"a", {3}}}), Error);
  EXPECT_THROW(ArenaLayout({{"", {2}}}), Error);
  EXPECT_THROW(ArenaLayout({{"z", {4, 0}}}), Error);
  EXPECT_THROW(ArenaLayout({{"huge", {std::size_t{1} << 32, std::size_t{1} << 32}}}), Error);
  try {
    ArenaLayout({{"w", {3}}, {"w", {3}}});
    FAIL() << "duplicate name accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'w' appears twice"), std::string::npos) << e.what();
  }
}

TEST(ArenaLayout, FindsTensorsByName) {
  const auto layout = small_layout();
  EXPECT_EQ(layout->index_of("bias"), 1u);
  EXPECT_FALSE(layout->find("nope").has_value());
  EXPECT_THROW((void)layout->index_of("nope"), Error);
}

TEST(ArenaLayout, RangeCoversWholeTensorsIncludingPadding) {
  const auto layout = small_layout();
  const ArenaRange r = layout->range(1, 3);
  EXPECT_EQ(r.offset, 16u);
  EXPECT_EQ(r.size, 48u);  // bias (32 with padding) + scale (16 with padding)
  const ArenaRange all = layout->range(0, layout->tensor_count());
  EXPECT_EQ(all.offset, 0u);
  EXPECT_EQ(all.size, layout->size());
  EXPECT_THROW((void)layout->range(2, 2), Error);
  EXPECT_THROW((void)layout->range(0, 5), Error);
}

TEST(Arena, BufferIsAlignedAndZeroed) {
  Arena arena(small_layout());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena.data().data()) % 64, 0u);
  EXPECT_EQ(arena.data().size(), 96u);
  for (float v : arena.data()) EXPECT_EQ(v, 0.0f);
}

TEST(Arena, ViewsAddressTheRightFloats) {
  Arena arena(small_layout());
  auto wte = matrix_map(arena, 0);
  ASSERT_EQ(wte.rows(), 5);
  ASSERT_EQ(wte.cols(), 3);
  wte(2, 1) = 7.0f;  // row-major: element 2*3+1
  EXPECT_EQ(arena.data()[7], 7.0f);
  EXPECT_EQ(arena.tensor(0)[7], 7.0f);

  auto bias = vector_map(arena, 1);
  ASSERT_EQ(bias.size(), 17);
  bias[16] = 3.0f;
  EXPECT_EQ(arena.data()[16 + 16], 3.0f);
  auto bias_row = matrix_map(arena, 1);
  EXPECT_EQ(bias_row.rows(), 1);
  EXPECT_EQ(bias_row.cols(), 17);

  auto conv = matrix_map(arena, 3);
  EXPECT_EQ(conv.rows(), 2);
  EXPECT_EQ(conv.cols(), 12);
  conv(1, 11) = 5.0f;
  EXPECT_EQ(arena.data()[64 + 23], 5.0f);
}

TEST(Arena, FillLeavesPaddingZero) {
  Arena arena(small_layout());
  arena.fill(1.5f);
  EXPECT_EQ(arena.data()[14], 1.5f);
  EXPECT_EQ(arena.data()[15], 0.0f);  // padding after wte
  EXPECT_EQ(arena.data()[32], 1.5f);  // last bias element
  EXPECT_EQ(arena.data()[33], 0.0f);
}

TEST(Arena, CopiesAreDeepAndLayoutsMustMatch) {
  Arena a(small_layout());
  a.fill(2.0f);
  Arena b = a;
  vector_map(b, 0)[0] = -1.0f;
  EXPECT_EQ(vector_map(a, 0)[0], 2.0f);
  EXPECT_NE(a.data().data(), b.data().data());

  Arena other(std::make_shared<const ArenaLayout>(std::vector<TensorSpec>{{"x", {4}}}));
  EXPECT_THROW(other.copy_from(a), Error);
  // Equal layouts built separately are interchangeable.
  Arena c(small_layout());
  c.copy_from(a);
  EXPECT_EQ(blake2b(c), blake2b(a));
}

// 600,000 floats (2.4 MB): above the size from which an arena is mapped pages, not heap.
std::shared_ptr<const ArenaLayout> large_layout() {
  return std::make_shared<const ArenaLayout>(
      std::vector<TensorSpec>{{"w", {1000, 500}}, {"b", {100000}}});
}

TEST(Arena, ALargeArenaIsZeroAlignedAndZeroesAgainAfterWrites) {
  Arena arena(large_layout());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena.data().data()) % 64, 0u);
  for (float v : arena.data()) ASSERT_EQ(v, 0.0f);
  arena.fill(3.0f);
  EXPECT_EQ(arena.tensor(1).back(), 3.0f);
  arena.zero();
  for (float v : arena.data()) ASSERT_EQ(v, 0.0f);
  // Usable after zero(): the pages come back on the next write.
  arena.tensor(0)[123] = 4.0f;
  EXPECT_EQ(arena.data()[123], 4.0f);
}

TEST(Arena, ALargeArenaCopiesAndMovesLikeASmallOne) {
  Arena a(large_layout());
  a.fill(-2.0f);
  Arena b = a;
  EXPECT_EQ(blake2b(b), blake2b(a));
  Arena moved = std::move(b);
  EXPECT_EQ(blake2b(moved), blake2b(a));
  Arena small(small_layout());
  small.fill(1.0f);
  small.zero();  // a heap arena zeroes by writing
  for (float v : small.data()) EXPECT_EQ(v, 0.0f);
}

// zero_resident(): zero like zero(), but every page of a mapped arena is in memory at once (mincore
// says so), where zero() gives the pages back.
TEST(Arena, ZeroResidentZeroesAndLeavesEveryPageInMemory) {
  Arena arena(large_layout());
  arena.fill(5.0f);
  const auto resident_pages = [&arena] {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t bytes = arena.data().size_bytes();
    std::vector<unsigned char> in_core((bytes + page - 1) / page);
    EXPECT_EQ(::mincore(arena.data().data(), bytes, in_core.data()), 0);
    return std::make_pair(std::ranges::count_if(in_core, [](unsigned char c) { return c & 1; }),
                          in_core.size());
  };
  arena.zero();
  const auto [given_back, all] = resident_pages();
  EXPECT_LT(static_cast<std::size_t>(given_back), all / 2);  // the pages given back
  arena.fill(5.0f);
  arena.zero_resident();
  for (float v : arena.data()) ASSERT_EQ(v, 0.0f);
  const auto [resident, pages] = resident_pages();
  EXPECT_EQ(static_cast<std::size_t>(resident), pages);
  Arena small(small_layout());
  small.fill(1.0f);
  small.zero_resident();
  for (float v : small.data()) EXPECT_EQ(v, 0.0f);
}

TEST(ArenaHash, EqualContentsHashEqualAndAnyBitChangesIt) {
  Arena a(small_layout());
  Arena b(small_layout());
  for (std::size_t i = 0; i < 4; ++i) {
    auto ta = a.tensor(i);
    auto tb = b.tensor(i);
    for (std::size_t j = 0; j < ta.size(); ++j) ta[j] = tb[j] = static_cast<float>(i * 100 + j);
  }
  EXPECT_EQ(blake2b(a), blake2b(b));
  b.tensor(3)[23] = std::nextafter(b.tensor(3)[23], 1e9f);
  EXPECT_NE(blake2b(a), blake2b(b));
  // +0.0 and -0.0 compare equal as floats but differ in bits: the hash sees the bits.
  Arena z1(small_layout());
  Arena z2(small_layout());
  vector_map(z2, 1)[0] = -0.0f;
  EXPECT_NE(blake2b(z1), blake2b(z2));
}

}  // namespace
}  // namespace loco
