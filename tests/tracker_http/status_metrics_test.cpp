#include "tracker/status_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <sstream>

#include "sample_status.hpp"

namespace loco::tracker {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// Checks the exposition format's rules this renderer relies on, and returns the number of samples
// of each family: a family's HELP and TYPE come once, before its samples; every sample belongs
// to a declared family; every value is a number or NaN/+Inf/-Inf.
std::map<std::string, int> check_exposition(const std::string& text) {
  static const std::regex help(R"(# HELP ([a-z_]+) \S.*)");
  static const std::regex type(R"(# TYPE ([a-z_]+) (gauge|counter))");
  static const std::regex sample(
      R"(([a-z_]+)(\{[a-z_]+="([^"\\\n]|\\["\\n])*"\})? (-?[0-9.]+(e[+-][0-9]+)?|NaN|[+-]Inf))");
  EXPECT_TRUE(text.ends_with('\n'));
  std::map<std::string, int> samples;
  std::string helped;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      EXPECT_FALSE(samples.contains(m[1])) << "a second HELP for " << m[1];
      helped = m[1];
    } else if (std::regex_match(line, m, type)) {
      EXPECT_EQ(m[1], helped) << "TYPE without HELP: " << line;
      samples[m[1]] = 0;
    } else if (std::regex_match(line, m, sample)) {
      EXPECT_TRUE(samples.contains(m[1])) << "a sample of an undeclared family: " << line;
      ++samples[m[1]];
    } else {
      ADD_FAILURE() << "not an exposition line: " << line;
    }
  }
  return samples;
}

TEST(StatusMetrics, RunAndMemberFigures) {
  const std::string text = render_status_metrics(test::sample_status());
  const auto samples = check_exposition(text);
  EXPECT_EQ(samples.size(), 29u);
  EXPECT_EQ(samples.at("loco_tracker_members"), 1);
  EXPECT_EQ(samples.at("loco_tracker_member_state_round"), 3);
  EXPECT_TRUE(has_line(text, "# TYPE loco_tracker_rounds_committed_total counter")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE loco_tracker_members gauge")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_info{run_id="gpt-small-demo"} 1)")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_members 3")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_members_in_sync 2")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_committed_round 40")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_rounds_committed_total 40")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_rounds_aborted_total 2")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_sent_bytes 4020000000")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_state_round{peer="3f9a1c0b77e2"} 40)")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_in_sync{peer="c07b52f1d96a"} 0)")) << text;
  EXPECT_TRUE(
      has_line(text, R"(loco_tracker_member_sent_bytes_total{peer="a41d09e5c3b8"} 1340000000)"))
      << text;
  EXPECT_TRUE(
      has_line(text, R"(loco_tracker_member_network_wait_seconds{peer="3f9a1c0b77e2"} 0.8)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_last_seen_seconds{peer="a41d09e5c3b8"} 1.5)"))
      << text;
}

TEST(StatusMetrics, WholeNumbersKeepEveryDigit) {
  proto::TrackerStatus s;
  s.bytes_sent = (1ull << 30) + 1;
  s.bytes_received = 1ull << 30;  // exact as a float, yet must not print as 1.0737418e+09
  const std::string text = render_status_metrics(s);
  EXPECT_TRUE(has_line(text, "loco_tracker_sent_bytes 1073741825")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_received_bytes 1073741824")) << text;
}

TEST(StatusMetrics, EmptyRunHasEveryFamilyAndNoMemberSamples) {
  const auto samples = check_exposition(render_status_metrics(proto::TrackerStatus{}));
  EXPECT_EQ(samples.size(), 29u);
  EXPECT_EQ(samples.at("loco_tracker_members"), 1);
  EXPECT_EQ(samples.at("loco_tracker_member_loss"), 0);
}

TEST(StatusMetrics, EscapesLabelValues) {
  proto::TrackerStatus s;
  s.run_id = "a\"b\\c\nd\xff";
  s.members.emplace_back().peer_id = "x\"y";
  const std::string text = render_status_metrics(s);
  check_exposition(text);
  EXPECT_TRUE(has_line(text, "loco_tracker_info{run_id=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\"} 1"))
      << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_shard{peer="x\"y"} 0)")) << text;
}

TEST(StatusMetrics, NonFiniteValuesUsePrometheusSpelling) {
  proto::TrackerStatus s;  // no round yet: the last round's loss is unknown
  s.members.emplace_back().peer_id = "p";
  s.members[0].last.loss = std::numeric_limits<float>::infinity();
  const std::string text = render_status_metrics(s);
  check_exposition(text);
  EXPECT_TRUE(has_line(text, "loco_tracker_last_round_mean_loss NaN")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_loss{peer="p"} +Inf)")) << text;
}

}  // namespace
}  // namespace loco::tracker
