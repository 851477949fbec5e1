// The end of a run with real processes on loopback (issue: the trained model was nowhere kept, and
// a peer restarted after the end trained the last rounds again alone). Three loco-peer processes
// train a 6-round run with the tracker copying the state every 4 rounds; one is SIGKILLed at round
// 2. The two others commit the final round 6, wait for the tracker to hold it and exit 0. The
// killed peer is then started again from its checkpoint: it fetches the final state, says the run
// is over and exits 0 with the others' state. The tracker's export and its status page's model
// link both carry the committed round and hash. Every wait is on a line a process prints.

#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "../support/http_client.hpp"
#include "../support/local_swarm.hpp"
#include "loco/checkpoint/safetensors.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

constexpr std::uint64_t kEndRounds = 6;

// "run over: final round R, state H, kept by the tracker": H, once `peer` says it with R =
// kEndRounds.
std::string final_state(PeerProcess& peer) {
  const std::string line = peer.wait_for("run over: ");
  const std::string expected = "run over: final round " + std::to_string(kEndRounds) + ", state ";
  if (!line.starts_with(expected) || !line.ends_with(", kept by the tracker")) return "";
  return line.substr(expected.size(), 16);
}

TEST(RunEnd, APeerStartedAfterTheEndGetsTheFinalStateAndTheTrackerHandsOutTheModel) {
  LocalSwarm swarm("run-end", kEndRounds, {"--tracker.custody-every", "4"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const auto checkpoint = (swarm.dir() / "late.ckpt").string();
  const std::vector<std::string> slow = {"--debug.step-delay", "30"};
  std::vector<std::string> late_options = slow;
  late_options.insert(late_options.end(),
                      {"--peer.checkpoint", checkpoint, "--peer.checkpoint-rounds", "1"});
  PeerProcess& a = swarm.add_peer("peer0", slow);
  PeerProcess& b = swarm.add_peer("peer1", slow);
  PeerProcess& late = swarm.add_peer("late", late_options);
  ASSERT_TRUE(late.wait_round(2)) << swarm.logs();
  EXPECT_EQ(late.process().stop(SIGKILL), -1);

  // The others commit the final round, wait for the tracker to keep it, and exit 0.
  const std::string state = final_state(a);
  ASSERT_EQ(state.size(), 16u) << swarm.logs();
  EXPECT_EQ(final_state(b), state) << swarm.logs();
  EXPECT_EQ(a.process().wait(), 0) << swarm.logs();
  EXPECT_EQ(b.process().wait(), 0) << swarm.logs();
  ASSERT_TRUE(a.committed().contains(kEndRounds)) << swarm.logs();
  EXPECT_EQ(a.committed().at(kEndRounds), state);
  EXPECT_NE(swarm.tracker().log().find("the run's final state (round 6, state " +
                                       state.substr(0, 12) + ") is in the tracker's custody"),
            std::string::npos)
      << swarm.logs();

  // Started again after the end, from its checkpoint of an early round.
  PeerProcess& again = swarm.add_peer("late", late_options);
  EXPECT_EQ(final_state(again), state) << swarm.logs();
  const std::string closing = again.read_to_end();
  EXPECT_EQ(again.process().wait(), 0) << swarm.logs();
  EXPECT_NE(closing.find("state=" + state), std::string::npos) << closing;
  EXPECT_NE(again.log().find("the run is over: it ended at round 6"), std::string::npos)
      << again.log();
  EXPECT_TRUE(again.rounds().empty()) << "it trained no round of its own";
  EXPECT_EQ(swarm.tracker().log().find("are lost"), std::string::npos) << swarm.logs();

  // The organiser's model: `loco-tracker export` and the status page's link, the same file.
  const auto out = swarm.dir() / "model.safetensors";
  test::ChildProcess exporter(
      {test::program("loco-tracker"), "export", "--out", out.string(), "--run.id", "run-end",
       "--run.config", (swarm.dir() / "swarm.toml").string(), "--tracker.state-file",
       (swarm.dir() / "tracker.state").string()},
      swarm.dir() / "export.log");
  exporter.read_line(test::kLinePatienceMs);
  ASSERT_EQ(exporter.wait(), 0) << test::read_text(swarm.dir() / "export.log");
  const auto exported = checkpoint::SafetensorsFile::read(out);
  EXPECT_EQ(exported.metadata().at("loco.round"), "6");
  EXPECT_TRUE(exported.metadata().at("loco.state_hash").starts_with(state));
  EXPECT_TRUE(exported.contains("transformer.wte.weight"));

  test::TestClient client(test::endpoint_of(swarm.tracker().http_address()));
  const auto reply = client.get("/model.safetensors");
  ASSERT_EQ(reply.response.result_int(), 200) << reply.response.body();
  EXPECT_EQ(reply.response[test::http::field::content_disposition],
            "attachment; filename=\"run-end-round-6.safetensors\"");
  const std::string& body = reply.response.body();
  const auto served = checkpoint::SafetensorsFile::parse(
      std::as_bytes(std::span(body.data(), body.size())), "the served model");
  EXPECT_EQ(served.metadata(), exported.metadata());
  EXPECT_EQ(served.tensor("transformer.wte.weight").data.size(),
            exported.tensor("transformer.wte.weight").data.size());
}

}  // namespace
}  // namespace loco
