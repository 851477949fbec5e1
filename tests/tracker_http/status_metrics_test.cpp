#include "tracker/status_metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

#include "sample_status.hpp"

namespace loco::tracker {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

proto::MemberStatus member(std::string peer_id) {
  proto::MemberStatus m;
  m.peer_id = std::move(peer_id);
  return m;
}

bool is_metric_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(),
                                      [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

// `{name="value"}` with only \\, \" and \n escaped in the value.
bool is_label_set(std::string_view labels) {
  const auto eq = labels.find("=\"");
  if (!labels.starts_with('{') || !labels.ends_with("\"}") || eq == std::string_view::npos)
    return false;
  if (!is_metric_name(labels.substr(1, eq - 1))) return false;
  const std::string_view value = labels.substr(eq + 2, labels.size() - eq - 4);
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '"' || value[i] == '\n') return false;
    if (value[i] != '\\') continue;
    ++i;  // an escape: \\, \" or \n
    if (i == value.size() || (value[i] != '\\' && value[i] != '"' && value[i] != 'n')) return false;
  }
  return true;
}

bool is_sample_value(const std::string& value) {
  if (value == "NaN" || value == "+Inf" || value == "-Inf") return true;
  if (value.empty() || value.find_first_not_of("0123456789.e+-") != std::string::npos) return false;
  char* end = nullptr;
  std::strtod(value.c_str(), &end);
  return end == value.c_str() + value.size();
}

// Checks the exposition format's rules this renderer relies on, and returns the number of samples
// of each family: a family's HELP and TYPE come once, before its samples; every sample belongs
// to a declared family; every value is a number or NaN/+Inf/-Inf.
std::map<std::string, int> check_exposition(const std::string& text) {
  EXPECT_TRUE(text.ends_with('\n'));
  std::map<std::string, int> samples;
  std::string helped;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, name, rest;
    words >> first;
    if (first == "#") {
      std::string keyword;
      words >> keyword >> name >> std::ws;
      std::getline(words, rest);
      EXPECT_TRUE(is_metric_name(name)) << line;
      if (keyword == "HELP") {
        EXPECT_FALSE(samples.contains(name)) << "a second HELP for " << name;
        EXPECT_FALSE(rest.empty()) << line;
        helped = name;
      } else {
        EXPECT_EQ(keyword, "TYPE") << line;
        EXPECT_EQ(name, helped) << "TYPE without HELP: " << line;
        EXPECT_TRUE(rest == "gauge" || rest == "counter") << line;
        samples[name] = 0;
      }
      continue;
    }
    const auto space = line.rfind(' ');
    if (space == std::string::npos) {
      ADD_FAILURE() << "not a sample: " << line;
      continue;
    }
    const std::string series = line.substr(0, space);
    const auto brace = series.find('{');
    name = series.substr(0, brace);
    EXPECT_TRUE(brace == std::string::npos || is_label_set(series.substr(brace))) << line;
    EXPECT_TRUE(is_sample_value(line.substr(space + 1))) << line;
    EXPECT_TRUE(samples.contains(name)) << "a sample of an undeclared family: " << line;
    ++samples[name];
  }
  return samples;
}

TEST(StatusMetrics, RunAndMemberFigures) {
  const std::string text = render_status_metrics(test::sample_status());
  const auto samples = check_exposition(text);
  EXPECT_EQ(samples.size(), 51u);
  EXPECT_EQ(samples.at("loco_tracker_members"), 1);
  EXPECT_EQ(samples.at("loco_tracker_spread"), 1);
  EXPECT_EQ(samples.at("loco_tracker_custody_round"), 1);
  EXPECT_EQ(samples.at("loco_tracker_member_state_round"), 3);
  EXPECT_TRUE(has_line(text, "# TYPE loco_tracker_rounds_committed_total counter")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE loco_tracker_members gauge")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_info{run_id="gpt-small-demo"} 1)")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_members 3")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_members_in_sync 2")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_committed_round 40")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_run_ended 0")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_rounds_committed_total 40")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_rounds_aborted_total 2")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_sent_bytes 4020000000")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_relayed_bytes 5000000")) << text;
  EXPECT_TRUE(
      has_line(text, R"(loco_tracker_member_relayed_bytes_total{peer="3f9a1c0b77e2"} 5000000)"))
      << text;
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
  EXPECT_TRUE(has_line(text, "loco_tracker_members_reachable 2")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_members_unreachable 1")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_reachable{peer="3f9a1c0b77e2"} 1)")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_reachable{peer="c07b52f1d96a"} 0)")) << text;
}

TEST(StatusMetrics, AReplicasTermTheReplicasAndItsLastFailover) {
  const std::string text = render_status_metrics(test::with_replicas({}));
  check_exposition(text);
  EXPECT_TRUE(has_line(text, "loco_tracker_replica_term 812")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_leading_since_seconds 1790000000")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_replicas 3")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_last_failover_seconds 1789999999")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_last_failover_from_term 640")) << text;
  EXPECT_TRUE(has_line(text, "loco_tracker_last_failover_leaderless_seconds 2.4")) << text;
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
  EXPECT_EQ(samples.size(), 51u);
  EXPECT_EQ(samples.at("loco_tracker_members"), 1);
  EXPECT_EQ(samples.at("loco_tracker_member_loss"), 0);
}

TEST(StatusMetrics, EscapesLabelValues) {
  proto::TrackerStatus s;
  s.run_id = "a\"b\\c\nd\xff";
  s.members.push_back(member("x\"y"));
  const std::string text = render_status_metrics(s);
  check_exposition(text);
  // The newline is shown as \x0a (core/utf8.hpp's printable), whose backslash is escaped.
  EXPECT_TRUE(has_line(text, "loco_tracker_info{run_id=\"a\\\"b\\\\c\\\\x0ad\xef\xbf\xbd\"} 1"))
      << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_shard{peer="x\"y"} 0)")) << text;
}

TEST(StatusMetrics, NonFiniteValuesUsePrometheusSpelling) {
  proto::TrackerStatus s;  // no round yet: the last round's loss is unknown
  s.members.push_back(member("p"));
  s.members[0].last.loss = std::numeric_limits<float>::infinity();
  const std::string text = render_status_metrics(s);
  check_exposition(text);
  EXPECT_TRUE(has_line(text, "loco_tracker_last_round_mean_loss NaN")) << text;
  EXPECT_TRUE(has_line(text, R"(loco_tracker_member_loss{peer="p"} +Inf)")) << text;
}

}  // namespace
}  // namespace loco::tracker
