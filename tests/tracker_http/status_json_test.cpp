#include "tracker/status_json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sample_status.hpp"

namespace loco::tracker {
namespace {

TEST(StatusJson, EmptyRun) {
  EXPECT_EQ(
      render_status_json(proto::TrackerStatus{}),
      R"({"run_id":"","epoch":0,"committed_round":0,"committed_hash":"","next_round":0,)"
      R"("final_round":0,"run_ended":false,"phase":"","attempt":0,"rounds_committed":0,"rounds_aborted":0,"peers_joined":0,)"
      R"("peers_refused":0,"peers_evicted":0,"misbehaviours":0,"members_reachable":0,)"
      R"("members_unreachable":0,"probes_reached":0,"probes_unreached":0,"members_left_out":0,)"
      R"("relayed_links":0,"relays_blamed":0,"round_seconds":0,)"
      R"("bytes_sent":0,"bytes_received":0,"bytes_relayed":0,"tokens_per_s":0,"spread":0,"custody_round":0,)"
      R"("custody_state_bytes":0,"custody_pulled_bytes":0,"members":[],"history":[],)"
      R"("lost_rounds":[]})");
}

TEST(StatusJson, AReplicaSaysItsNameTermSinceWhenItLeadsTheReplicasAndTheLastFailover) {
  const std::string json = render_status_json(test::with_replicas({}));
  EXPECT_NE(json.find(R"("epoch":0,"replica":"tracker-b","replica_term":812,)"
                      R"("leading_since_ms":1790000000000,)"
                      R"("replicas":[{"name":"tracker-b","term":812,"leads":true},)"
                      R"({"name":"tracker-c","term":815,"leads":false},)"
                      R"({"name":"tracker-a","term":1204,"leads":false}],)"
                      R"("last_failover":{"unix_ms":1789999999950,"from":"tracker-a",)"
                      R"("from_term":640,"to_term":812,"leaderless_ms":2400},"committed_round")"),
            std::string::npos)
      << json;
}

TEST(StatusJson, EveryFieldOfAMemberAndARound) {
  proto::TrackerStatus s;
  s.run_id = "run-a";
  s.epoch = 3;
  s.committed_round = 40;
  s.committed_hash = "ab12";
  s.next_round = 41;
  s.phase = "round 41 running";
  s.attempt = 2;
  s.rounds_committed = 5;
  s.rounds_aborted = 1;
  s.peers_joined = 4;
  s.peers_refused = 6;
  s.peers_evicted = 7;
  s.misbehaviours = 8;
  s.members_unreachable = 1;
  s.probes_unreached = 2;
  s.members_left_out = 3;
  s.bytes_sent = 100;
  s.bytes_received = 200;
  s.tokens_per_s = 9000.5;
  s.members.push_back(proto::MemberStatus{.peer_id = "3f9a1c0b77e2",
                                          .public_key = "k1",
                                          .address = "10.0.0.5:7701",
                                          .shard = 2,
                                          .joined_s_ago = 10.5,
                                          .last_seen_s_ago = 0.25,
                                          .state_round = 40,
                                          .in_sync = true,
                                          .in_round = false,
                                          .reachability = proto::Reachability::unreachable,
                                          .last = proto::Heartbeat{.state_round = 39,
                                                                   .inner_step = 1000,
                                                                   .loss = 2.5f,
                                                                   .tokens_per_s = 9000.5f,
                                                                   .bytes_sent = 100,
                                                                   .bytes_received = 200,
                                                                   .network_wait_s = 0.1f,
                                                                   .bytes_relayed = 300,
                                                                   .sketch = {}}});
  Digest hash{};
  hash[0] = 0xab;
  s.history.push_back(proto::RoundRecord{.round = 40,
                                         .unix_ms = 1700000000000,
                                         .group_size = 3,
                                         .mean_loss = 2.75f,
                                         .state_hash = hash});
  EXPECT_EQ(
      render_status_json(s),
      R"({"run_id":"run-a","epoch":3,"committed_round":40,"committed_hash":"ab12",)"
      R"("next_round":41,"final_round":0,"run_ended":false,"phase":"round 41 running","attempt":2,)"
      R"("rounds_committed":5,"rounds_aborted":1,"peers_joined":4,"peers_refused":6,)"
      R"("peers_evicted":7,"misbehaviours":8,"members_reachable":0,"members_unreachable":1,)"
      R"("probes_reached":0,"probes_unreached":2,"members_left_out":3,)"
      R"("relayed_links":0,"relays_blamed":0,"round_seconds":0,)"
      R"("bytes_sent":100,"bytes_received":200,"bytes_relayed":0,)"
      R"("tokens_per_s":9000.5,"spread":0,"custody_round":0,"custody_state_bytes":0,)"
      R"("custody_pulled_bytes":0,"members":[{"peer_id":"3f9a1c0b77e2","public_key":"k1",)"
      R"("address":"10.0.0.5:7701","shard":2,"joined_s_ago":10.5,"last_seen_s_ago":0.25,)"
      R"("state_round":40,"in_sync":true,"in_round":false,"reachability":"unreachable",)"
      R"("last_heartbeat":{)"
      R"("state_round":39,"inner_step":1000,"loss":2.5,"tokens_per_s":9000.5,)"
      R"("bytes_sent":100,"bytes_received":200,"network_wait_s":0.1,"bytes_relayed":300}}],)"
      R"("history":[{"round":40,"unix_ms":1700000000000,"group_size":3,"mean_loss":2.75,)"
      R"("state_hash":"ab00000000000000000000000000000000000000000000000000000000000000"}],)"
      R"("lost_rounds":[]})");
}

TEST(StatusJson, EscapesOddTextFromPeers) {
  proto::TrackerStatus s;
  s.run_id = "caf\xc3\xa9";  // valid UTF-8 passes through
  s.members.push_back(proto::MemberStatus{});
  s.members[0].address = "a\"b\\c\nd\x01</script>\xff:7701";
  const std::string json = render_status_json(s);
  EXPECT_NE(json.find(R"("run_id":"caf)"
                      "\xc3\xa9"
                      R"(")"),
            std::string::npos)
      << json;
  // Control characters shown as \xNN (then escaped for JSON), an invalid byte as U+FFFD.
  EXPECT_NE(json.find(R"("address":"a\"b\\c\\x0ad\\x01</script>)"
                      "\xef\xbf\xbd"
                      R"(:7701")"),
            std::string::npos)
      << json;
}

// A right-to-left override or a line separator would reorder or break what the page shows: it
// is shown as its escape, visibly.
TEST(StatusJson, ShowsFormatAndSeparatorCharactersEscaped) {
  proto::TrackerStatus s;
  s.members.push_back(proto::MemberStatus{});
  s.members[0].address = "1.2.3.4\xe2\x80\xae:7701\xe2\x80\xa8x\xe2\x80\x8b\xef\xbb\xbf";
  const std::string json = render_status_json(s);
  EXPECT_NE(json.find(R"("address":"1.2.3.4\\u202e:7701\\u2028x\\u200b\\ufeff")"),
            std::string::npos)
      << json;
}

TEST(StatusJson, LostRoundsAreListed) {
  proto::TrackerStatus s;
  s.lost_rounds.push_back(
      proto::LostRounds{.first = 56, .last = 60, .went_back_to = 55, .unix_ms = 1700000000000});
  const std::string json = render_status_json(s);
  EXPECT_NE(json.find(R"("lost_rounds":[{"first":56,"last":60,"went_back_to":55,)"
                      R"("unix_ms":1700000000000}])"),
            std::string::npos)
      << json;
}

TEST(StatusJson, NonFiniteNumbersAreNull) {
  proto::TrackerStatus s;
  s.tokens_per_s = std::numeric_limits<double>::infinity();
  s.members.push_back(proto::MemberStatus{});
  s.members[0].last.loss = NAN;
  s.history.emplace_back().mean_loss = NAN;
  const std::string json = render_status_json(s);
  EXPECT_NE(json.find(R"("tokens_per_s":null,"spread":0,"custody_round":0,)"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("loss":null)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("mean_loss":null)"), std::string::npos) << json;
  EXPECT_EQ(json.find("nan"), std::string::npos) << json;
  EXPECT_EQ(json.find("inf"), std::string::npos) << json;
}

}  // namespace
}  // namespace loco::tracker
