// A peer's options as the swarm gets them (host/peer_options.hpp): the upload cap for serving
// dataset shards (--peer.data-serve-rate) is a bandwidth in the units every rate takes, "0" and
// "unlimited" lift it, and anything else is a config error naming the option.

#include "loco/host/peer_options.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "loco/secure/identity.hpp"
#include "loco/swarm/swarm_session.hpp"
#include "loco/train/train_config.hpp"

namespace loco::host {
namespace {

std::uint64_t serve_rate(const std::string& rate) {
  PeerOptions o;
  o.tracker_address = "127.0.0.1:7700";
  o.run_id = "run";
  o.tracker_public_key = secure::to_hex(secure::KeyPair::generate().public_key());
  if (!rate.empty()) o.data_serve_rate = rate;
  return swarm_config(o, train::TrainConfig{}).serve.bytes_per_second;
}

TEST(PeerOptions, TheServeRateIsABandwidthAndZeroOrUnlimitedLiftsIt) {
  EXPECT_EQ(serve_rate(""), 1'000'000u);  // the default, 1MB/s
  EXPECT_EQ(serve_rate("8Mbit"), 1'000'000u);
  EXPECT_EQ(serve_rate("250kB/s"), 250'000u);
  EXPECT_EQ(serve_rate("0"), 0u);
  EXPECT_EQ(serve_rate("unlimited"), 0u);
  try {
    serve_rate("fast");
    ADD_FAILURE() << "a rate of \"fast\" was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    EXPECT_NE(e.message().find("--peer.data-serve-rate"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace loco::host
