// The status page in a real browser: headless Chromium loads it from a status server in this
// process (on 127.0.0.1; no other network), runs its script, and the test reads the resulting DOM.
// Skipped, and says so, only when Chromium is not installed (scripts/install-deps.sh installs it).

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"
#include "http_harness.hpp"
#include "sample_status.hpp"

namespace loco::test {
namespace {

std::optional<std::filesystem::path> find_chromium() {
  std::istringstream path(std::getenv("PATH") != nullptr ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');) {
    const auto candidate = std::filesystem::path(dir) / "chromium";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

struct BrowserRun {
  int exit_code = -1;
  std::string output;  // stdout
};

// Runs headless Chromium on `url` with the flags that work on these machines (no sandbox as
// root, nothing that reaches for the network), a fresh profile, and `extra` flags. Virtual time
// lets the page's script run and its fetch complete before the DOM or screenshot is taken.
// `timeout` ends a hung browser: a hang guard, far above the few seconds a run takes.
BrowserRun run_chromium(const std::filesystem::path& chromium, const TempDir& dir,
                        const std::string& url, const std::string& extra) {
  const std::string command =
      "timeout -k 10 300 " + chromium.string() +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --disable-dev-shm-usage --hide-scrollbars --virtual-time-budget=8000"
      " --user-data-dir=" +
      (dir / "profile").string() + " " + extra + " " + url + " 2>" +
      (dir / "chromium.log").string();
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  BrowserRun run;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The text between the first `open` and the next `close` after it, or "".
std::string between(const std::string& text, const std::string& open, const std::string& close) {
  const auto start = text.find(open);
  if (start == std::string::npos) return "";
  const auto end = text.find(close, start);
  return end == std::string::npos ? "" : text.substr(start, end - start);
}

class StatusPageBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (!chromium_) GTEST_SKIP() << "chromium is not installed: run scripts/install-deps.sh";
  }

  // Starts a status server that reports `status`; the page's address.
  std::string serve(proto::TrackerStatus status) {
    server_.emplace([status] { return status; });
    return "http://127.0.0.1:" + std::to_string(server_->endpoint().port()) + "/";
  }

  std::optional<std::filesystem::path> chromium_;
  std::optional<ServerThread> server_;
  TempDir dir_;
};

TEST_F(StatusPageBrowser, ShowsEveryPeerAndTheLossChart) {
  const BrowserRun run = run_chromium(*chromium_, dir_, serve(sample_status()), "--dump-dom");
  ASSERT_EQ(run.exit_code, 0) << read_file(dir_ / "chromium.log");
  const std::string& dom = run.output;

  const std::string peers = between(dom, "<tbody id=\"peers\">", "</tbody>");
  EXPECT_EQ(test::occurrences(peers, "<tr data-peer="), 3u) << dom;
  for (const auto& member : sample_status().members) {
    EXPECT_NE(peers.find("<td class=\"id\" title=\"" + member.public_key + "\">" + member.peer_id),
              std::string::npos)
        << member.peer_id << " missing from the peer table:\n"
        << peers;
  }
  EXPECT_NE(peers.find("[2001:db8::7]:7701"), std::string::npos) << peers;

  const std::string chart = between(dom, "<svg id=\"loss-chart\"", "</svg>");
  ASSERT_FALSE(chart.empty()) << dom;
  EXPECT_NE(chart.find("class=\"loss-line\""), std::string::npos) << chart;
  EXPECT_EQ(test::occurrences(chart, "class=\"loss-point\""), 40u)
      << "one point per committed round";

  EXPECT_NE(dom.find("round 41 running (attempt 1)"), std::string::npos) << "the phase";
  EXPECT_NE(dom.find("gpt-small-demo"), std::string::npos) << "the run id";
  const std::string live = between(dom, "<span id=\"live-text\">", "</span>");
  EXPECT_NE(live.find(">updated "), std::string::npos)
      << "the page's last fetch of /status failed: " << live;
}

// Each committed round at the loss its members reported, and a gap where none did: the line breaks
// there, nothing is drawn at zero, and a round between two gaps is a point of its own.
TEST_F(StatusPageBrowser, TheLossChartLeavesAGapWhereNoLossIsKnown) {
  proto::TrackerStatus status;
  status.run_id = "gaps";
  const float unknown = std::numeric_limits<float>::quiet_NaN();
  const float losses[] = {3.0f, 2.0f, 1.75f, unknown, 1.5f, 1.25f, unknown, 1.125f};
  for (std::uint64_t round = 1; round <= 8; ++round)
    status.history.push_back(proto::RoundRecord{.round = round,
                                                .unix_ms = 1'700'000'000'000ull + 1000 * round,
                                                .group_size = 3,
                                                .mean_loss = losses[round - 1],
                                                .state_hash = {}});
  const BrowserRun run = run_chromium(*chromium_, dir_, serve(status), "--dump-dom");
  ASSERT_EQ(run.exit_code, 0) << read_file(dir_ / "chromium.log");
  const std::string chart = between(run.output, "<svg id=\"loss-chart\"", "</svg>");
  EXPECT_EQ(test::occurrences(chart, "class=\"loss-line\""), 3u) << chart;
  EXPECT_EQ(test::occurrences(chart, "class=\"loss-point\""), 6u) << chart;
  for (const char* point : {"round 1: loss 3.0000", "round 3: loss 1.7500", "round 5: loss 1.5000",
                            "round 8: loss 1.1250"})
    EXPECT_NE(chart.find(point), std::string::npos) << point << "\n" << chart;
  EXPECT_EQ(chart.find("round 4:"), std::string::npos) << chart;
}

// Rounds the run lost (no live peer or copy held them when the tracker had to go on) are said on
// the page, not silently committed again.
TEST_F(StatusPageBrowser, LostRoundsAreSaid) {
  proto::TrackerStatus status;
  status.run_id = "lost";
  status.lost_rounds.push_back(
      proto::LostRounds{.first = 56, .last = 60, .went_back_to = 55, .unix_ms = 1700000000000});
  const BrowserRun run = run_chromium(*chromium_, dir_, serve(status), "--dump-dom");
  ASSERT_EQ(run.exit_code, 0) << read_file(dir_ / "chromium.log");
  const std::string lost = between(run.output, "id=\"lost\"", "</div>");
  EXPECT_NE(lost.find("Rounds 56–60 were lost: no live peer or custody copy held them, and the run "
                      "went on from round 55 (2023-11-14 22:13:20 UTC)."),
            std::string::npos)
      << lost;
  EXPECT_EQ(lost.find("hidden"), std::string::npos) << lost;
}

// Once the run ended with its final state in custody, the page links to the final model; before
// any copy there is no link.
TEST_F(StatusPageBrowser, TheFinalModelIsLinked) {
  proto::TrackerStatus status;
  status.run_id = "ended";
  status.committed_round = 60;
  status.final_round = 60;
  status.run_ended = true;
  status.custody_round = 60;
  status.phase = "the run ended at round 60: its model is in the tracker's custody";
  const BrowserRun run = run_chromium(*chromium_, dir_, serve(status), "--dump-dom");
  ASSERT_EQ(run.exit_code, 0) << read_file(dir_ / "chromium.log");
  const std::string model = between(run.output, "id=\"model\"", "</div>");
  EXPECT_NE(model.find("href=\"model.safetensors\""), std::string::npos) << model;
  EXPECT_NE(model.find("model.safetensors, round 60: the run's final model"), std::string::npos)
      << model;
  EXPECT_EQ(model.find("hidden"), std::string::npos) << model;
}

// A replica's page lists the replicas in the election, the leader first with since when it leads,
// and says how it came to lead; tracker-a's name is also the failover's "from".
TEST_F(StatusPageBrowser, TheReplicasPanelShowsTheLeaderTheOthersAndTheLastFailover) {
  const BrowserRun run =
      run_chromium(*chromium_, dir_, serve(test::with_replicas(sample_status())), "--dump-dom");
  ASSERT_EQ(run.exit_code, 0) << read_file(dir_ / "chromium.log");
  const std::string replicas = between(run.output, "<tbody id=\"replicas\">", "</tbody>");
  EXPECT_EQ(test::occurrences(replicas, "<tr data-replica="), 3u) << replicas;
  const std::string leader = between(replicas, "<tr data-replica=\"tracker-b\">", "</tr>");
  EXPECT_NE(leader.find(">tracker-b (serves this page)<"), std::string::npos) << leader;
  EXPECT_NE(leader.find(">812<"), std::string::npos) << leader;
  EXPECT_NE(leader.find("leads since 2026-09-21 14:13:20 UTC"), std::string::npos) << leader;
  const std::string standby = between(replicas, "<tr data-replica=\"tracker-a\">", "</tr>");
  EXPECT_NE(standby.find(">1204<"), std::string::npos) << standby;
  EXPECT_NE(standby.find(">standby<"), std::string::npos) << standby;
  EXPECT_EQ(standby.find("leads"), std::string::npos) << standby;

  const std::string failover = between(run.output, "id=\"failover\"", "</div>");
  EXPECT_EQ(failover.find("hidden"), std::string::npos) << failover;
  EXPECT_NE(failover.find("Last failover at 2026-09-21 14:13:19 UTC: from term 640 (tracker-a) to "
                          "term 812 (tracker-b), 2.4 s without a leader in the election"),
            std::string::npos)
      << failover;
}

TEST_F(StatusPageBrowser, AnEmptyRunSaysSo) {
  proto::TrackerStatus empty;
  empty.run_id = "new-run";
  empty.phase = "waiting for peers";
  const BrowserRun run = run_chromium(*chromium_, dir_, serve(empty), "--dump-dom");
  ASSERT_EQ(run.exit_code, 0) << read_file(dir_ / "chromium.log");
  const std::string peers = between(run.output, "<tbody id=\"peers\">", "</tbody>");
  EXPECT_NE(peers.find("no peers have joined"), std::string::npos) << peers;
  EXPECT_EQ(test::occurrences(peers, "<tr data-peer="), 0u) << peers;
  const std::string chart = between(run.output, "<svg id=\"loss-chart\"", "</svg>");
  EXPECT_NE(chart.find("No committed round with a reported loss yet"), std::string::npos) << chart;
  EXPECT_NE(run.output.find(">waiting for peers<"), std::string::npos);
  EXPECT_NE(between(run.output, "id=\"model\"", ">").find("hidden"), std::string::npos)
      << "no copy: no link";
  const std::string replicas = between(run.output, "<tbody id=\"replicas\">", "</tbody>");
  EXPECT_NE(replicas.find("a single tracker: no replicas"), std::string::npos) << replicas;
  EXPECT_NE(between(run.output, "id=\"failover\"", ">").find("hidden"), std::string::npos);
}

// Also the picture in docs/TRACKER.md (a replica's page, so that it shows the replicas too): copy
// build/<type>/bin/tracker-status.png to docs/images/ after a change to the page.
TEST_F(StatusPageBrowser, RendersAScreenshot) {
  const auto png = std::filesystem::path(LOCO_BIN_DIR) / "tracker-status.png";
  std::filesystem::remove(png);
  const BrowserRun run = run_chromium(*chromium_, dir_, serve(test::with_replicas(sample_status())),
                                      "--window-size=1280,1120 --screenshot=" + png.string());
  ASSERT_EQ(run.exit_code, 0) << read_file(dir_ / "chromium.log");
  const std::string bytes = read_file(png);
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), "\x89PNG\r\n\x1a\n");
  // The IHDR chunk's width, big-endian: the window's.
  const auto width = (static_cast<unsigned char>(bytes[16]) << 24) |
                     (static_cast<unsigned char>(bytes[17]) << 16) |
                     (static_cast<unsigned char>(bytes[18]) << 8) |
                     static_cast<unsigned char>(bytes[19]);
  EXPECT_EQ(width, 1280u);
}

}  // namespace
}  // namespace loco::test
