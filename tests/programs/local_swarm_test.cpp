// loco-swarm as a user runs it: a real tracker and real loco-peer processes on loopback, trained
// for a few rounds of the tiny model. Every wait is on a line loco-swarm prints (with a hang
// guard), never on the clock.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"

namespace loco {
namespace {

using test::program;

// configs/swarm-tiny.toml with `steps` steps of `h` inner steps each round, one progress line per
// round, into `dir`/run.toml.
void write_run_config(const std::filesystem::path& dir, int steps, int h) {
  std::string text = test::read_text(std::string(LOCO_SOURCE_DIR) + "/configs/swarm-tiny.toml");
  const auto set = [&text](const std::string& key, int value) {
    const auto at = text.find("\n" + key + " = ");
    ASSERT_NE(at, std::string::npos) << key;
    const auto end = text.find('\n', at + 1);
    text.replace(at + 1, end - at - 1, key + " = " + std::to_string(value));
  };
  set("steps", steps);
  set("diloco-h", h);
  set("log-every", h);
  std::ofstream(dir / "run.toml") << text;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string swarm_config(int peers, const std::string& extra = "") {
  return "[swarm]\npeers = " + std::to_string(peers) +
         "\nrun-config = \"run.toml\"\nfolder = \"run\"\n" + extra +
         "\n[link]\nupload = \"20Mbit\"\ndownload = \"20Mbit\"\nlatency = \"5ms\"\n";
}

// loco-swarm's stdout, line by line, until it closes.
std::vector<std::string> read_all(test::ChildProcess& swarm) {
  std::vector<std::string> lines;
  for (std::string line = swarm.read_line(test::kLinePatienceMs); !line.empty();
       line = swarm.read_line(test::kLinePatienceMs))
    lines.push_back(line);
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

// The processes whose parent is `parent`, from /proc.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("PPid:") && std::stoi(line.substr(5)) == parent)
        children.push_back(std::stoi(name));
    }
  }
  return children;
}

TEST(LocalSwarm, PeersTrainTogetherAndEndWithTheSameState) {
  test::TempDir dir;
  write_run_config(dir.path(), 60, 20);  // 3 rounds
  write_text(dir / "swarm.toml", swarm_config(2, "link-override = [\"2: latency=10ms\"]"));
  test::ChildProcess swarm({program("loco-swarm"), "--config", (dir / "swarm.toml").string()},
                           dir / "swarm.log");
  const std::vector<std::string> lines = read_all(swarm);
  const std::string output = joined(lines);
  EXPECT_EQ(swarm.stop(0), 0) << output << test::read_text(dir / "run" / "peer-1.log");

  EXPECT_NE(output.find("/60 | loss "), std::string::npos) << output;  // a progress line
  EXPECT_NE(output.find("all 2 peers hold the same state "), std::string::npos) << output;
  // Each peer's row: "   1  ID  FIRST-LOSS  VALIDATION  FLOOR  ...": it learned.
  int rows = 0;
  for (const auto& line : lines) {
    std::istringstream row(line);
    int peer = 0;
    std::string id;
    double first = 0, validation = 0, floor = 0;
    if (!(row >> peer >> id >> first >> validation >> floor)) continue;
    ++rows;
    EXPECT_LT(validation, first) << line;
    EXPECT_GT(validation, floor * 0.99) << line;
  }
  EXPECT_EQ(rows, 2) << output;
  // The per-peer link reached peer 2's config.
  EXPECT_NE(test::read_text(dir / "run" / "peer-2.toml").find("latency = \"10ms\""),
            std::string::npos);
}

TEST(LocalSwarm, AConfigErrorIsReportedAndNothingStarts) {
  test::TempDir dir;
  write_run_config(dir.path(), 60, 20);
  const auto run = [&dir](const std::string& config) {
    write_text(dir / "swarm.toml", config);
    test::ChildProcess swarm({program("loco-swarm"), "--config", (dir / "swarm.toml").string()},
                             dir / "swarm.log");
    EXPECT_NE(swarm.stop(0), 0) << config;
    EXPECT_FALSE(std::filesystem::exists(dir / "run")) << config;
    return test::read_text(dir / "swarm.log");
  };
  EXPECT_NE(run(swarm_config(0)).find("--swarm.peers: Value 0 not in range"), std::string::npos)
      << test::read_text(dir / "swarm.log");
  EXPECT_NE(run(swarm_config(2, "peer = 3"))
                .find("unknown key 'swarm.peer'; did you mean "
                      "'swarm.peers'?"),
            std::string::npos)
      << test::read_text(dir / "swarm.log");
  EXPECT_NE(run(swarm_config(2, "link-override = [\"3: latency=10ms\"]"))
                .find("there is no peer 3 (peers are 1 to 2)"),
            std::string::npos)
      << test::read_text(dir / "swarm.log");
  EXPECT_NE(run(swarm_config(2, "link-override = [\"1: latency=fast\"]")).find("--link.latency"),
            std::string::npos)
      << test::read_text(dir / "swarm.log");
}

// The command line of process `pid`, its arguments separated by spaces.
std::string command_line(pid_t pid) {
  std::string text = test::read_text("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

// Reads loco-swarm's output up to its first combined progress line (every peer trains).
bool wait_first_round(test::ChildProcess& swarm) {
  for (std::string line = swarm.read_line(test::kLinePatienceMs); !line.empty();
       line = swarm.read_line(test::kLinePatienceMs))
    if (line.starts_with("round ")) return true;
  return false;
}

TEST(LocalSwarm, ACrashedPeerIsReportedWithItsLogAndTheOthersFinish) {
  test::TempDir dir;
  write_run_config(dir.path(), 100, 20);
  write_text(dir / "swarm.toml", swarm_config(3));
  test::ChildProcess swarm({program("loco-swarm"), "--config", (dir / "swarm.toml").string()},
                           dir / "swarm.log");
  ASSERT_TRUE(wait_first_round(swarm)) << test::read_text(dir / "swarm.log");
  for (const pid_t child : children_of(swarm.pid()))
    if (command_line(child).find("peer-2.toml") != std::string::npos) ::kill(child, SIGKILL);
  const std::vector<std::string> lines = read_all(swarm);
  const std::string output = joined(lines);
  EXPECT_EQ(swarm.stop(0), 1) << output;
  const std::string failure = "peer 2 FAILED (killed by signal 9 (Killed)): ";
  EXPECT_NE(output.find(failure), std::string::npos) << output;
  EXPECT_NE(output.find("its log: " + (dir / "run" / "peer-2.log").string()), std::string::npos)
      << output;
  // Peers 1 and 3 trained on without it to the end.
  int rows = 0;
  for (const auto& line : lines) {
    std::istringstream row(line);
    int peer = 0;
    std::string id;
    double first = 0, validation = 0;
    if (row >> peer >> id >> first >> validation) ++rows;
  }
  EXPECT_EQ(rows, 2) << output;
}

TEST(LocalSwarm, SigintStopsEveryChildAndReapsThem) {
  test::TempDir dir;
  write_run_config(dir.path(), 100'000, 20);  // would run for hours
  write_text(dir / "swarm.toml", swarm_config(3));
  test::ChildProcess swarm({program("loco-swarm"), "--config", (dir / "swarm.toml").string()},
                           dir / "swarm.log");
  ASSERT_TRUE(wait_first_round(swarm)) << test::read_text(dir / "swarm.log");
  const std::vector<pid_t> children = children_of(swarm.pid());
  EXPECT_EQ(children.size(), 4u);  // the tracker and 3 peers

  ::kill(swarm.pid(), SIGINT);
  const std::string output = joined(read_all(swarm));
  EXPECT_EQ(swarm.stop(0), 0) << output;
  EXPECT_NE(output.find("(stopped by a signal)"), std::string::npos) << output;
  for (const pid_t child : children) EXPECT_NE(::kill(child, 0), 0) << "pid " << child << " lives";
  // The peers left the run rather than vanishing.
  EXPECT_NE(test::read_text(dir / "run" / "tracker.log").find("left: stopped by a signal"),
            std::string::npos);
}

}  // namespace
}  // namespace loco
