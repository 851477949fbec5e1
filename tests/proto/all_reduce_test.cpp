// Both all-reduce algorithms in memory: world sizes 1 to 7, element counts from 0, chunks that do
// and do not divide the segments, messages delivered in order on each link but interleaved at
// random across links. Every member must end with the same bits, close to the true mean, having
// sent the bytes and taken the steps the cost model says; a member that sends garbage is named.

#include "loco/proto/all_reduce.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <deque>
#include <map>

#include "all_reduce_harness.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/token_weights.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::AllReduceHarness;
using testing::kDirect;
using testing::kRing;
using testing::random_vectors;
using testing::ring_of;

// Each coordinate's mean without its `trim` smallest and largest values, in double.
std::vector<double> trimmed_mean(const std::vector<std::vector<float>>& inputs, std::size_t trim) {
  const std::size_t size = inputs.empty() ? 0 : inputs[0].size();
  std::vector<double> out(size);
  std::vector<double> column(inputs.size());
  for (std::size_t j = 0; j < size; ++j) {
    for (std::size_t m = 0; m < inputs.size(); ++m) column[m] = inputs[m][j];
    std::sort(column.begin(), column.end());
    double sum = 0;
    for (std::size_t m = trim; m < inputs.size() - trim; ++m) sum += column[m];
    out[j] = sum / static_cast<double>(inputs.size() - 2 * trim);
  }
  return out;
}

TEST(AllReduce, TheDirectExchangeTakesTheTrimmedMeanWhenAsked) {
  std::uint64_t seed = 40;
  for (const std::size_t n : {3, 4, 5, 8})
    for (const std::size_t trim : {std::size_t{1}, (n - 1) / 2})
      for (const std::size_t chunk : {7, 1 << 16}) {
        SCOPED_TRACE(::testing::Message() << n << " members, trim " << trim << ", chunk " << chunk);
        AllReduceHarness direct(kDirect, n, 301, "fp32", chunk, seed, 0, trim);
        const auto expected = trimmed_mean(direct.values, trim);
        direct.run(seed++);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(direct.nodes[i]->done()) << "member " << i;
          EXPECT_EQ(direct.values[i], direct.values[0]) << "the same bits everywhere";
        }
        for (std::size_t j = 0; j < expected.size(); ++j)
          ASSERT_NEAR(direct.values[0][j], expected[j], 1e-5) << "value " << j;
      }
}

// One member of eight sends its update scaled 1000x, sign-flipped or random: with one trimmed on
// each side no coordinate of the result leaves the range of the seven honest values, and the
// result stays close to the honest members' own mean.
TEST(AllReduce, ATrimmedMeanKeepsOnePoisonedUpdateOutOfEveryCoordinate) {
  const std::size_t n = 8;
  for (const char* attack : {"scaled", "flipped", "random"}) {
    SCOPED_TRACE(attack);
    AllReduceHarness direct(kDirect, n, 500, "int8:block=64", 1 << 16, 9, 0, 1);
    std::vector<float>& bad = direct.values[3];
    Rng rng(77);
    for (float& x : bad) {
      if (std::string(attack) == "scaled") x *= 1000.0f;
      if (std::string(attack) == "flipped") x = -100.0f * x;
      if (std::string(attack) == "random") x = 1e4f * rng.normal();
    }
    std::vector<std::vector<float>> honest = direct.values;
    honest.erase(honest.begin() + 3);
    const auto honest_mean = trimmed_mean(honest, 0);
    const auto plain_mean = trimmed_mean(direct.values, 0);  // what averaging it in gives
    direct.run(5);
    double distance = 0, spread = 0, plain_distance = 0;
    for (std::size_t j = 0; j < honest_mean.size(); ++j) {
      double low = honest[0][j], high = honest[0][j];
      for (const auto& h : honest)
        low = std::min<double>(low, h[j]), high = std::max<double>(high, h[j]);
      const double x = direct.values[0][j];
      EXPECT_GE(x, low - 0.05) << "value " << j;
      EXPECT_LE(x, high + 0.05) << "value " << j;
      distance += (x - honest_mean[j]) * (x - honest_mean[j]);
      spread += honest_mean[j] * honest_mean[j];
      plain_distance += (plain_mean[j] - honest_mean[j]) * (plain_mean[j] - honest_mean[j]);
    }
    // The result is closer to the honest members' mean than that mean is to zero (a trimmed
    // mean of 6 of their 7 values, roughly), and far closer than the plain mean would have been.
    EXPECT_LT(std::sqrt(distance), 0.7 * std::sqrt(spread));
    EXPECT_GT(std::sqrt(plain_distance), 20 * std::sqrt(distance));
  }
}

TEST(AllReduce, EveryMemberEndsWithTheSameBitsCloseToTheMean) {
  std::uint64_t seed = 1;
  for (const AllReduceAlgorithm algorithm : {kRing, kDirect})
    for (const std::size_t n : {1, 2, 3, 4, 5, 7}) {
      for (const std::size_t size : {0, 1, 5, 64, 1001}) {
        for (const std::size_t chunk : {7, 1 << 16}) {
          for (const char* spec : {"fp32", "int8:block=64"}) {
            SCOPED_TRACE(::testing::Message()
                         << name(algorithm) << ", " << n << " members, " << size
                         << " values, chunk " << chunk << ", " << spec);
            AllReduceHarness ring(algorithm, n, size, spec, chunk, seed);
            const auto inputs = ring.values;
            ring.run(seed++);
            const Digest first = blake2b(std::span<const float>(ring.values[0]));
            for (std::size_t i = 0; i < n; ++i) {
              ASSERT_TRUE(ring.nodes[i]->done()) << "member " << i;
              EXPECT_EQ(blake2b(std::span<const float>(ring.values[i])), first) << "member " << i;
            }
            const double tolerance = std::string(spec) == "fp32" ? 1e-5 : 0.05;
            for (std::size_t e = 0; e < size; ++e) {
              double mean = 0;
              for (const auto& v : inputs) mean += v[e];
              mean /= static_cast<double>(n);
              ASSERT_NEAR(ring.values[0][e], mean, tolerance) << "element " << e;
            }
          }
        }
      }
    }
}

// PeerCore keeps the update apart from the mean (a retry starts again from it, with no copy):
// the mean has the same bits as the in-place collective's, and the update is left as it was, in
// a weighted round too (the ring scales its own values as it reads them).
TEST(AllReduce, AnUpdateKeptApartFromTheMeanGivesTheSameBitsAndStaysUntouched) {
  for (const AllReduceAlgorithm algorithm : {kRing, kDirect})
    for (const std::size_t n : {1, 2, 3, 5}) {
      for (const std::size_t trim : {0, 1}) {
        if (trim > 0 && (algorithm == kRing || n < 3)) continue;
        for (const bool weighted : {false, true}) {
          SCOPED_TRACE(::testing::Message() << name(algorithm) << ", " << n << " members, trim "
                                            << trim << (weighted ? ", weighted" : ""));
          std::vector<std::uint64_t> tokens;
          for (std::size_t i = 0; i < n; ++i) tokens.push_back(1024 * (i + 1));
          const std::vector<float> weights =
              weighted ? contribution_weights(tokens) : std::vector<float>{};
          AllReduceHarness in_place(algorithm, n, 1001, "int8:block=64", 7, 5, 0, trim, weights);
          AllReduceHarness apart(algorithm, n, 1001, "int8:block=64", 7, 5, 0, trim, weights, true);
          const auto updates = apart.updates;
          in_place.run(9);
          apart.run(9);
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_TRUE(apart.nodes[i]->done()) << "member " << i;
            EXPECT_EQ(blake2b(std::span<const float>(apart.values[i])),
                      blake2b(std::span<const float>(in_place.values[i])))
                << "member " << i;
            EXPECT_EQ(apart.updates[i], updates[i]) << "member " << i << "'s update was written";
          }
        }
      }
    }
}

// Rounds bounded by time: member m's update counts weights[m] times (N·tokens_m / Σ tokens). Both
// algorithms give the weighted mean, the same bits on every member; the direct exchange's trim
// cuts by value and weighs what it keeps.
TEST(AllReduce, AWeightedRoundGivesEveryMemberTheSameBitsOfTheWeightedMean) {
  const std::vector<std::uint64_t> tokens = {4096, 1024, 4096, 2048, 4096};
  const std::vector<float> weights = contribution_weights(tokens);
  ASSERT_EQ(weights.size(), tokens.size());
  std::uint64_t seed = 60;
  for (const AllReduceAlgorithm algorithm : {kRing, kDirect})
    for (const std::size_t trim : {std::size_t{0}, std::size_t{1}}) {
      if (algorithm == kRing && trim > 0) continue;  // the ring cannot trim
      for (const std::size_t chunk : {7, 1 << 16}) {
        SCOPED_TRACE(::testing::Message()
                     << name(algorithm) << ", trim " << trim << ", chunk " << chunk);
        AllReduceHarness group(algorithm, tokens.size(), 301, "fp32", chunk, seed, 0, trim,
                               weights);
        const auto inputs = group.values;
        group.run(seed++);
        for (std::size_t i = 0; i < tokens.size(); ++i) {
          ASSERT_TRUE(group.nodes[i]->done()) << "member " << i;
          EXPECT_EQ(group.values[i], group.values[0]) << "the same bits everywhere";
        }
        for (std::size_t e = 0; e < 301; ++e) {
          std::vector<std::pair<double, double>> column;  // (value, tokens)
          for (std::size_t m = 0; m < tokens.size(); ++m)
            column.emplace_back(inputs[m][e], static_cast<double>(tokens[m]));
          std::sort(column.begin(), column.end());
          double sum = 0, weight = 0;
          for (std::size_t j = trim; j < column.size() - trim; ++j) {
            sum += column[j].first * column[j].second;
            weight += column[j].second;
          }
          ASSERT_NEAR(group.values[0][e], sum / weight, 1e-5) << "element " << e;
        }
      }
    }
}

TEST(AllReduce, TheRingSendsTheBytesOfItsCostModel) {
  // fp32 through a fixed-size codec: each member sends 2(N−1) segments' worth of encoded chunks.
  const std::size_t n = 4, size = 1000, chunk = 100;
  AllReduceHarness ring(kRing, n, size, "fp32", chunk, 3);
  ring.run(3);
  const std::size_t header = kChunkHeaderBytes;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t expected = 0;
    // Reduce-scatter sends segments i, i−1, ..., i−N+2; all-gather sends i+1, i, ..., i−N+3.
    for (std::size_t s = 0; s < n - 1; ++s) {
      for (const std::size_t g : {(i + n - s) % n, (i + 1 + n - s) % n}) {
        const std::size_t seg = size * (g + 1) / n - size * g / n;
        for (std::size_t at = 0; at < seg; at += chunk)
          expected += header + ring.codec->max_encoded_size(std::min(chunk, seg - at));
      }
    }
    EXPECT_EQ(ring.nodes[i]->bytes_sent(), expected) << "member " << i;
  }
  // The payload is 2(N−1)/N · S values of 4 bytes; each of the 2(N−1) · 3 chunks adds the chunk
  // header's 86 bytes (22, and a signature's 64, unused by the ring) and the codec's 12.
  EXPECT_EQ(ring.nodes[0]->bytes_sent(), 2 * (n - 1) * size / n * 4 + 2 * (n - 1) * 3 * 98);
}

TEST(AllReduce, TheDirectExchangeSendsTheRingsBytesInTwoStepsNotTwoNMinusTwo) {
  // Its segments are whole chunks (segment_begin): 128 chunks, 32 per member.
  const std::size_t n = 4, size = 1280, chunk = 10;
  ASSERT_EQ(direct_chunk_values(size, chunk), chunk);
  AllReduceHarness direct(kDirect, n, size, "fp32", chunk, 3);
  direct.run(3);
  const std::size_t header = kChunkHeaderBytes;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t expected = 0;
    // Its part of every other segment, then N − 1 copies of the mean of its own.
    for (std::size_t g = 0; g < n; ++g) {
      const std::size_t seg =
          segment_begin(size, n, g + 1, chunk) - segment_begin(size, n, g, chunk);
      const std::size_t copies = g == i ? n - 1 : 1;
      for (std::size_t at = 0; at < seg; at += chunk)
        expected += copies * (header + direct.codec->max_encoded_size(std::min(chunk, seg - at)));
    }
    EXPECT_EQ(direct.nodes[i]->bytes_sent(), expected) << "member " << i;
  }
  // As the ring's: 2(N−1)/N · S values of 4 bytes, and 98 bytes for each of 2(N−1) · 32 chunks.
  EXPECT_EQ(direct.nodes[0]->bytes_sent(), 2 * (n - 1) * size / n * 4 + 2 * (n - 1) * 32 * 98);

  // The steps, each at least one link latency: one chunk per segment, so nothing pipelines.
  for (const std::size_t members : {2, 4, 7}) {
    AllReduceHarness ring(kRing, members, 700, "fp32", 1 << 16, 4);
    AllReduceHarness two_steps(kDirect, members, 700, "fp32", 1 << 16, 4);
    EXPECT_EQ(ring.waves(), 2 * (members - 1)) << members << " members";
    EXPECT_EQ(two_steps.waves(), 2u) << members << " members";
    for (std::size_t i = 0; i < members; ++i) EXPECT_TRUE(two_steps.nodes[i]->done());
  }
}

// The direct exchange's segments are whole chunks of a size that depends on the update alone, so
// one encoding of an update serves any group (encoded_update.hpp); they differ by a chunk at most.
TEST(AllReduce, TheDirectExchangesSegmentsAreWholeChunksWhateverTheGroup) {
  EXPECT_EQ(direct_chunk_values(85'350'912, 1 << 16), 65'536u);  // 1,303 chunks
  EXPECT_EQ(direct_chunk_values(1'000'000, 1 << 16), 15'632u);   // ⌈10⁶/64⌉ up to 8s: 64
  EXPECT_EQ(direct_chunk_values(14'816, 1 << 16), 232u);         // 64 chunks
  EXPECT_EQ(direct_chunk_values(256, 1 << 16), 8u);              // the smallest: 32 chunks
  EXPECT_EQ(direct_chunk_values(0, 1 << 16), 8u);
  EXPECT_EQ(direct_chunk_values(1'000, 7), 7u) << "never more than configured";
  const auto begins = [](std::size_t values, std::size_t n, std::size_t grain) {
    std::vector<std::size_t> out;
    for (std::size_t g = 0; g <= n; ++g) out.push_back(segment_begin(values, n, g, grain));
    return out;
  };
  using V = std::vector<std::size_t>;
  EXPECT_EQ(begins(1000, 4, 1), (V{0, 250, 500, 750, 1000})) << "the ring's";
  EXPECT_EQ(begins(1000, 4, 100), (V{0, 200, 500, 700, 1000}));
  EXPECT_EQ(begins(1050, 4, 100), (V{0, 200, 500, 800, 1050})) << "a short last chunk";
  EXPECT_EQ(begins(50, 3, 100), (V{0, 0, 0, 50})) << "fewer chunks than members";
  EXPECT_EQ(begins(0, 3, 256), (V{0, 0, 0, 0}));
  for (const std::size_t values : {1, 255, 256, 257, 512, 14'816, 1'000'003})
    for (const std::size_t n : {1, 2, 3, 5, 8, 64}) {
      const std::size_t grain = direct_chunk_values(values, 1 << 16);
      const V b = begins(values, n, grain);
      std::size_t smallest = values, largest = 0;
      for (std::size_t g = 0; g < n; ++g) {
        EXPECT_EQ(b[g] % grain, 0u) << values << " values, " << n << " members";
        smallest = std::min(smallest, b[g + 1] - b[g]);
        largest = std::max(largest, b[g + 1] - b[g]);
      }
      EXPECT_LE(largest - smallest, grain) << values << " values, " << n << " members";
      if (values >= 64 * 8) {
        EXPECT_GT(smallest, 0u) << "every member of " << n << " owns a segment of " << values;
      }
    }
}

TEST(AllReduce, TheDirectExchangeNeedsOnlyMembersItStillExpectsChunksFrom) {
  // A member that has sent everything may leave (its round done) without failing the others.
  AllReduceHarness group(kDirect, 3, 300, "fp32", 100, 5);
  group.start_all();
  AllReduce& first = *group.nodes[0];
  EXPECT_FALSE(first.needs_link_to(group.members[0])) << "itself";
  EXPECT_TRUE(first.needs_link_to(group.members[1]));
  EXPECT_FALSE(first.needs_link_to(ring_of(4)[3])) << "not a member";
  // Member 1's reduce-scatter part reaches member 0; then member 0's own segment is complete only
  // with member 2's, and member 1's mean of its segment is still due: both still needed.
  for (auto& body : std::exchange(group.links[{1, 0}], {}))
    first.on_message(group.members[1], body);
  EXPECT_TRUE(first.needs_link_to(group.members[1])) << "its mean of its own segment is due";
  group.deliver(5);  // everything else
  ASSERT_TRUE(first.done());
  EXPECT_FALSE(first.needs_link_to(group.members[1]));
  EXPECT_FALSE(first.needs_link_to(group.members[2]));
}

TEST(AllReduce, AnOversizedUpdateIsCaughtByItsSuccessorAndNamed) {
  const std::size_t n = 4;
  AllReduceHarness ring(kRing, n, 4000, "int8:block=64", 500, 5, /*median=*/std::sqrt(4000.0f));
  for (float& v : ring.values[2]) v *= 1000;  // member 2 lies about nothing but sends 1000x
  ring.run(5);
  const auto& failure = ring.nodes[3]->failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->suspect, ring.members[2]);
  EXPECT_NE(failure->reason.find("honest update(s) reach at most"), std::string::npos)
      << failure->reason;
  for (const auto& node : ring.nodes) EXPECT_FALSE(node->done()) << "nobody applies a partial sum";
}

TEST(AllReduce, AnOversizedUpdateIsCaughtByEveryOwnerAndNamed) {
  const std::size_t n = 4;
  AllReduceHarness direct(kDirect, n, 4000, "int8:block=64", 500, 5, /*median=*/std::sqrt(4000.0f));
  for (float& v : direct.values[2]) v *= 1000;
  direct.run(5);
  for (const std::size_t owner : {0, 1, 3}) {
    const auto& failure = direct.nodes[owner]->failure();
    ASSERT_TRUE(failure.has_value()) << "member " << owner;
    EXPECT_EQ(failure->suspect, direct.members[2]);
    EXPECT_NE(failure->reason.find("1 honest update(s) reach at most"), std::string::npos)
        << failure->reason;
  }
  for (const auto& node : direct.nodes)
    EXPECT_FALSE(node->done()) << "nobody applies a partial sum";
}

TEST(AllReduce, NonFiniteValuesAreRefused) {
  for (const AllReduceAlgorithm algorithm : {kRing, kDirect}) {
    SCOPED_TRACE(name(algorithm));
    AllReduceHarness ring(algorithm, 2, 10, "fp32", 10, 9);
    ring.nodes[0]->start();
    ring.collect(0);
    auto body = ring.links[{0, 1}].front();
    // The fp32 codec's payload follows its 12-byte header: poison the last value.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto bits = std::bit_cast<std::array<std::byte, 4>>(nan);
    for (std::size_t j = 0; j < 4; ++j) body[body.size() - 4 + j] = bits[j];
    ring.nodes[1]->start();
    ring.nodes[1]->on_message(ring.members[0], body);
    ASSERT_TRUE(ring.nodes[1]->failure());
    EXPECT_EQ(ring.nodes[1]->failure()->suspect, ring.members[0]);
    // The fp32 decoder itself refuses non-finite values; codecs whose messages cannot hold them
    // (int8 scales aside) are caught by the collective's own check.
    EXPECT_NE(ring.nodes[1]->failure()->reason.find("NaN or infinite"), std::string::npos)
        << ring.nodes[1]->failure()->reason;
  }
}

TEST(AllReduce, MessagesFromTheWrongPeerRoundOrPlaceAreRefused) {
  const auto fresh = [](AllReduceAlgorithm algorithm) {
    auto ring = std::make_unique<AllReduceHarness>(algorithm, 3, 30, "fp32", 5, 11);
    ring->start_all();
    return ring;
  };
  {
    auto direct = fresh(kDirect);
    const auto body = direct->links[{0, 1}].front();
    direct->nodes[1]->on_message(key(9).public_key(), body);  // not a member
    EXPECT_EQ(direct->nodes[1]->failure()->suspect, key(9).public_key());
  }
  for (const AllReduceAlgorithm algorithm : {kRing, kDirect}) {
    SCOPED_TRACE(name(algorithm));
    if (algorithm == kRing) {
      auto ring = fresh(algorithm);
      const auto body = ring->links[{0, 1}].front();
      ring->nodes[1]->on_message(ring->members[2], body);  // 2 is not 1's predecessor
      EXPECT_EQ(ring->nodes[1]->failure()->suspect, ring->members[2]);
    }
    {
      auto ring = fresh(algorithm);
      auto body = ring->links[{0, 1}][1];  // chunk 1 before chunk 0
      ring->nodes[1]->on_message(ring->members[0], body);
      EXPECT_NE(ring->nodes[1]->failure()->reason.find("chunk 1 came where chunk 0"),
                std::string::npos);
    }
    {
      auto ring = fresh(algorithm);
      auto body = ring->links[{0, 1}].front();
      body[1] ^= std::byte{1};  // another round
      ring->nodes[1]->on_message(ring->members[0], body);
      EXPECT_NE(ring->nodes[1]->failure()->reason.find("it is for round 6"), std::string::npos);
    }
    {
      auto ring = fresh(algorithm);
      auto body = ring->links[{0, 1}].front();
      body.resize(body.size() - 3);  // truncated codec message
      ring->nodes[1]->on_message(ring->members[0], body);
      ASSERT_TRUE(ring->nodes[1]->failure());
      EXPECT_EQ(ring->nodes[1]->failure()->suspect, ring->members[0]);
    }
  }
}

}  // namespace
}  // namespace loco::proto
