#pragma once
// The processes of a local swarm: a loco-tracker, then, once it has printed where it listens, one
// loco-peer per peer, each with its config from the run folder (swarm_folder.hpp). It pumps their
// output into their log files and hands each peer's lines to the caller, and it stops them in
// order: the peers first (SIGTERM: each leaves the run and prints its summary), then the tracker.
//
// Call order: start(), then run() once.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "swarm_folder.hpp"

namespace loco::peer {

class LocalSwarm {
 public:
  struct Events {
    std::function<void(std::size_t peer, const std::string& line)> peer_line;
    std::function<void(std::size_t peer, const ChildProcess& process)> peer_ended;
    std::function<void(std::chrono::steady_clock::time_point now)> tick;  // a few times a second
  };

  // The programs are `bin_dir`/loco-tracker and `bin_dir`/loco-peer.
  LocalSwarm(SwarmPlan plan, SwarmFolder folder, std::filesystem::path bin_dir);

  // Starts the tracker, waits for its address, writes the peers' configs and starts the peers.
  // Returns false if `signals` turned non-zero first. Throws Error(config) with the tracker's
  // last words and its log file when it exits instead of listening.
  bool start(const std::atomic<int>& signals);
  const std::string& tracker_address() const { return address_; }
  const std::string& status_page() const { return status_page_; }  // "" when there is none

  // Runs until every peer has ended, then stops the tracker. The first signal (`signals` turns
  // 1) sends the peers SIGTERM; a second, or kStopPatience without an exit, SIGKILL. Returns
  // true when every process exited with code 0.
  bool run(const std::atomic<int>& signals, const Events& events);
  const ChildProcess& tracker() const { return *tracker_; }

  static constexpr std::chrono::seconds kStopPatience{30};

 private:
  // Waits up to `timeout_ms` for output of any running child and hands out the lines.
  void pump(int timeout_ms, const Events* events);
  void stop_peers(int signal);

  SwarmPlan plan_;
  SwarmFolder folder_;
  std::filesystem::path bin_dir_;
  std::unique_ptr<ChildProcess> tracker_;
  std::vector<std::unique_ptr<ChildProcess>> peers_;
  std::vector<bool> reported_;  // peer_ended was called
  std::string address_;
  std::string public_key_;
  std::string status_page_;
};

}  // namespace loco::peer
