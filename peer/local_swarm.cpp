#include "local_swarm.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <csignal>
#include <optional>

#include "loco/core/error.hpp"

namespace loco::peer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 200;  // how often signals and exits are looked at
constexpr std::string_view kListening = "listening on ";
constexpr std::string_view kStatusPage = "status page at ";

}  // namespace

LocalSwarm::LocalSwarm(SwarmPlan plan, SwarmFolder folder, std::filesystem::path bin_dir)
    : plan_(std::move(plan)), folder_(std::move(folder)), bin_dir_(std::move(bin_dir)) {}

bool LocalSwarm::start(const std::atomic<int>& signals) {
  tracker_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{(bin_dir_ / "loco-tracker").string(), "--config",
                               folder_.tracker.config.string()},
      folder_.tracker.log);
  while (address_.empty()) {
    if (signals.load() > 0) return false;
    ::pollfd fd{tracker_->fd(), POLLIN, 0};
    ::poll(&fd, 1, kPollMs);
    for (const std::string& line : tracker_->read_lines()) {
      // "listening on HOST:PORT as KEY" on stdout; "status page at URL" in the log.
      if (const auto as = line.find(" as ");
          line.starts_with(kListening) && as != std::string::npos) {
        address_ = line.substr(kListening.size(), as - kListening.size());
        public_key_ = line.substr(as + 4);
      } else if (const auto at = line.find(kStatusPage); at != std::string::npos) {
        status_page_ = line.substr(at + kStatusPage.size());
      }
    }
    tracker_->reap();
    if (address_.empty() && tracker_->finished())
      throw Error(ErrorCategory::config,
                  fmt::format("loco-tracker ended ({}) before listening: \"{}\"; its log: {}",
                              tracker_->exit_description(), tracker_->last_line(),
                              folder_.tracker.log.string()));
  }
  write_peer_configs(plan_, folder_, address_, public_key_);
  for (const auto& files : folder_.peers) {
    peers_.push_back(
        std::make_unique<ChildProcess>(std::vector<std::string>{(bin_dir_ / "loco-peer").string(),
                                                                "--config", files.config.string()},
                                       files.log));
    reported_.push_back(false);
  }
  return true;
}

void LocalSwarm::pump(int timeout_ms, const Events* events) {
  std::vector<::pollfd> fds;
  std::vector<ChildProcess*> owners;
  const auto watch = [&](ChildProcess& child) {
    if (child.fd() < 0) return;
    fds.push_back({child.fd(), POLLIN, 0});
    owners.push_back(&child);
  };
  watch(*tracker_);
  for (auto& peer : peers_) watch(*peer);
  ::poll(fds.data(), fds.size(), timeout_ms);  // EINTR (a signal) is fine: the caller looks
  tracker_->read_lines();                      // kept in its log only
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    for (const std::string& line : peers_[i]->read_lines())
      if (events != nullptr && events->peer_line) events->peer_line(i, line);
  }
  tracker_->reap();
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    peers_[i]->reap();
    if (peers_[i]->finished() && !reported_[i]) {
      reported_[i] = true;
      if (events != nullptr && events->peer_ended) events->peer_ended(i, *peers_[i]);
    }
  }
  if (events != nullptr && events->tick) events->tick(Clock::now());
}

void LocalSwarm::stop_peers(int signal) {
  for (auto& peer : peers_) peer->signal(signal);
}

bool LocalSwarm::run(const std::atomic<int>& signals, const Events& events) {
  // 1. The peers train until they are done, a signal comes, or the tracker dies.
  std::optional<Clock::time_point> deadline;
  const auto peers_running = [this] {
    for (const auto& peer : peers_)
      if (!peer->finished()) return true;
    return false;
  };
  while (peers_running()) {
    pump(kPollMs, &events);
    if (!deadline && (signals.load() > 0 || tracker_->finished())) {
      stop_peers(SIGTERM);
      deadline = Clock::now() + kStopPatience;
    }
    if (signals.load() > 1 || (deadline && Clock::now() > *deadline)) stop_peers(SIGKILL);
  }
  // 2. Then the tracker.
  tracker_->signal(SIGTERM);
  deadline = Clock::now() + kStopPatience;
  while (!tracker_->finished()) {
    pump(kPollMs, &events);
    if (signals.load() > 1 || Clock::now() > *deadline) tracker_->signal(SIGKILL);
  }
  bool ok = tracker_->succeeded();
  for (const auto& peer : peers_) ok = ok && peer->succeeded();
  return ok;
}

}  // namespace loco::peer
