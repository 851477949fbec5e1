// A member's update encoded once for a round (encoded_update.hpp): units at fixed places, each
// seeded on its own, so the bytes are the same on any thread count and in any group; values that
// cannot be encoded are named.

#include "loco/proto/encoded_update.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "all_reduce_harness.hpp"
#include "loco/core/rng.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::key;
using testing::random_vectors;

constexpr const char* kStochastic = "int8:block=64,round=stochastic";

std::vector<std::vector<std::byte>> units_of(const EncodedUpdate& e) {
  std::vector<std::vector<std::byte>> out;
  for (std::size_t u = 0; u < e.units(); ++u) out.emplace_back(e.unit(u).begin(), e.unit(u).end());
  return out;
}

TEST(EncodedUpdate, TheBytesDoNotDependOnTheThreadCount) {
  const auto codec = compress::make_codec(kStochastic);
  // 256 units of 4096 and a short last one: large enough to be encoded by a team.
  const std::vector<float> values = random_vectors(1, 256 * 4096 + 1001, 5)[0];
  ASSERT_GE(values.size(), EncodedUpdate::kParallelValues);
  const PeerKey member = key(1).public_key();
  const EncodedUpdate one(*codec, values, 4096, 7001, member, 1);
  ASSERT_FALSE(one.failure());
  ASSERT_EQ(one.units(), 257u);
  EXPECT_EQ(one.bytes(), 256 * codec->max_encoded_size(4096) + codec->max_encoded_size(1001));
  for (const int threads : {2, 3, 4, 8}) {
    const EncodedUpdate many(*codec, values, 4096, 7001, member, threads);
    EXPECT_EQ(units_of(many), units_of(one)) << threads << " threads";
  }
  // Each unit is the codec's message for its values, with the unit's own seed.
  for (const std::size_t u : {std::size_t{0}, std::size_t{140}, std::size_t{256}}) {
    const std::size_t first = u * 4096;
    const std::vector<std::byte> alone = codec->encode(
        std::span(values).subspan(first, std::min<std::size_t>(4096, values.size() - first)),
        compress::EncodeOptions{.seed = EncodedUpdate::unit_seed(7001, member, first),
                                .shape = {}});
    EXPECT_EQ(units_of(one)[u], alone) << "unit " << u;
  }
  const std::vector<float> decoded = one.decode(*codec);
  ASSERT_EQ(decoded.size(), values.size());
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    error += (decoded[i] - values[i]) * (decoded[i] - values[i]);
    norm += values[i] * values[i];
  }
  EXPECT_LT(std::sqrt(error / norm), 0.02) << "int8 keeps the update within a few percent";
}

TEST(EncodedUpdate, MembersAndRoundsRoundApartAndTheSameInputsGiveTheSameBytes) {
  const auto codec = compress::make_codec(kStochastic);
  const std::vector<float> values = random_vectors(1, 10'000, 6)[0];
  const EncodedUpdate a(*codec, values, 1000, 3001, key(1).public_key());
  EXPECT_EQ(units_of(EncodedUpdate(*codec, values, 1000, 3001, key(1).public_key())), units_of(a));
  EXPECT_NE(units_of(EncodedUpdate(*codec, values, 1000, 3001, key(2).public_key())), units_of(a))
      << "two members' stochastic roundings are independent";
  EXPECT_NE(units_of(EncodedUpdate(*codec, values, 1000, 4001, key(1).public_key())), units_of(a))
      << "so are two rounds'";
}

TEST(EncodedUpdate, ValuesThatCannotBeEncodedAreNamedByTheirUnit) {
  const auto codec = compress::make_codec("int8:block=64");
  std::vector<float> values(10'000, 1.0f);
  values[5'432] = std::nanf("");
  const EncodedUpdate e(*codec, values, 1000, 1, key(1).public_key(), 2);
  ASSERT_TRUE(e.failure());
  EXPECT_NE(e.failure()->find("values 5000 on"), std::string::npos) << *e.failure();
  EXPECT_EQ(e.units(), 0u);
}

TEST(EncodedUpdate, NoValuesAreNoUnits) {
  const auto codec = compress::make_codec("int8:block=64");
  const EncodedUpdate e(*codec, {}, 1000, 1, key(1).public_key());
  EXPECT_FALSE(e.failure());
  EXPECT_EQ(e.units(), 0u);
  EXPECT_TRUE(e.decode(*codec).empty());
}

}  // namespace
}  // namespace loco::proto
