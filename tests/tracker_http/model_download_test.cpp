// ModelGate: one place per address, the others in the order they first asked, and a bounded line
// (model_download.hpp). No sockets: the clock is the test's.

#include "tracker/model_download.hpp"

#include <gtest/gtest.h>

#include <string>

#include "loco/core/error.hpp"

namespace loco::tracker {
namespace {

using namespace std::chrono_literals;
using Clock = ModelGate::Clock;

class ModelGateTest : public ::testing::Test {
 protected:
  explicit ModelGateTest(DownloadLimits limits = {.max_downloads = 2, .max_waiting = 3})
      : gate_([this] { return model_; }, limits) {}

  ModelGate::Answer ask(const std::string& address, Clock::duration at) {
    return gate_.take(address, start_ + at);
  }

  std::shared_ptr<const ModelDownload> model_ = std::make_shared<const ModelDownload>(
      ModelDownload{.round = 6, .filename = "run-round-6.safetensors", .bytes = "bytes"});
  Clock::time_point start_ = Clock::now();
  ModelGate gate_;
};

TEST_F(ModelGateTest, NoModelIsNoPlaceAndNoLine) {
  model_ = nullptr;
  const auto answer = ask("10.0.0.1", 0s);
  EXPECT_FALSE(answer.lease);
  EXPECT_EQ(answer.retry_after, Clock::duration::zero()) << "404, not 503";
  EXPECT_EQ(gate_.waiting(), 0u);
}

TEST_F(ModelGateTest, OnePlaceAnAddressAndTheOthersInLine) {
  auto a = ask("10.0.0.1", 0s);
  ASSERT_TRUE(a.lease);
  EXPECT_EQ(a.lease.model().bytes, "bytes");
  const auto again = ask("10.0.0.1", 0s);
  EXPECT_FALSE(again.lease);
  EXPECT_TRUE(again.already);
  EXPECT_EQ(again.position, 0u) << "an address downloading does not wait in line as well";
  auto b = ask("10.0.0.2", 0s);
  ASSERT_TRUE(b.lease);
  EXPECT_EQ(gate_.downloading(), 2u);

  const auto c = ask("10.0.0.3", 1s);
  EXPECT_FALSE(c.lease);
  EXPECT_EQ(c.position, 1u);
  EXPECT_EQ(c.retry_after, DownloadLimits{}.hold / 3);
  // The hammering address asks twenty times a second: it keeps its place behind C, no better.
  for (int i = 0; i < 40; ++i) EXPECT_EQ(ask("10.0.0.4", 1s + i * 50ms).position, 2u);

  a.lease.reset();  // A's download ended: its place is C's
  EXPECT_FALSE(ask("10.0.0.4", 3s).lease) << "D asks first, but C is ahead";
  EXPECT_TRUE(ask("10.0.0.3", 4s).lease) << "C asks within its hold";
  b.lease.reset();
  EXPECT_TRUE(ask("10.0.0.4", 5s).lease);
  EXPECT_EQ(gate_.waiting(), 0u);
}

TEST_F(ModelGateTest, AWaiterThatStopsAskingLosesItsPlace) {
  auto a = ask("10.0.0.1", 0s);
  auto b = ask("10.0.0.2", 0s);
  EXPECT_EQ(ask("10.0.0.3", 0s).position, 1u);  // then never asks again
  EXPECT_EQ(ask("10.0.0.4", 1s).position, 2u);
  a.lease.reset();
  // C's hold (15 s) has not run out: the free place is kept for it.
  EXPECT_FALSE(ask("10.0.0.4", 14s).lease);
  EXPECT_TRUE(ask("10.0.0.4", 16s).lease) << "C's hold ran out: D is first";
}

TEST_F(ModelGateTest, TheLineIsBoundedHoweverManyAddressesAsk) {
  auto a = ask("10.0.0.1", 0s);
  auto b = ask("10.0.0.2", 0s);
  for (int i = 0; i < 10'000; ++i) {
    const auto answer = ask("127.0." + std::to_string(i / 256) + "." + std::to_string(i % 256), 1s);
    EXPECT_FALSE(answer.lease);
    EXPECT_EQ(answer.position, i < 3 ? static_cast<std::size_t>(i) + 1 : 0u) << i;
  }
  EXPECT_EQ(gate_.waiting(), 3u);
  EXPECT_EQ(gate_.downloading(), 2u);
  // Once the three in line stop asking, a newcomer gets in line again.
  EXPECT_EQ(ask("10.0.0.9", 17s).position, 1u);
}

TEST_F(ModelGateTest, ANewerModelGoesToTheNextDownloadAndTheLeaseKeepsItsOwn) {
  auto a = ask("10.0.0.1", 0s);
  model_ = std::make_shared<const ModelDownload>(
      ModelDownload{.round = 7, .filename = "run-round-7.safetensors", .bytes = "newer"});
  auto b = ask("10.0.0.2", 0s);
  EXPECT_EQ(a.lease.model().bytes, "bytes");
  EXPECT_EQ(b.lease.model().bytes, "newer");
  ModelGate::Lease moved = std::move(a.lease);
  EXPECT_EQ(gate_.downloading(), 2u) << "a moved lease is one place";
  moved.reset();
  EXPECT_EQ(gate_.downloading(), 1u);
}

TEST(ModelGateLimits, OutOfRangeLimitsAreRefused) {
  EXPECT_THROW(validate(DownloadLimits{.max_downloads = 0}), Error);
  EXPECT_THROW(validate(DownloadLimits{.max_waiting = 0}), Error);
  EXPECT_THROW(validate(DownloadLimits{.floor_bytes_per_second = 0}), Error);
  EXPECT_THROW(validate(DownloadLimits{.hold = 0s}), Error);
  EXPECT_NO_THROW(validate(DownloadLimits{}));
}

}  // namespace
}  // namespace loco::tracker
