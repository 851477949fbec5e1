#pragma once
// The bodies of /status and /metrics, rendered at most once per `max_age` however often they are
// asked for. Rendering walks every member and round on the tracker's event loop; without this,
// anyone could keep that loop busy (and the heartbeats waiting) by asking in a tight loop.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "loco/proto/tracker_status.hpp"

namespace loco::tracker {

// Gives the tracker's status now; called on the server's io_context thread.
using StatusSource = std::function<proto::TrackerStatus()>;

class StatusRenderer {
 public:
  using Clock = std::chrono::steady_clock;

  StatusRenderer(StatusSource status, Clock::duration max_age)
      : status_(std::move(status)), max_age_(max_age) {}

  // Throw what the status source throws.
  const std::string& json();
  const std::string& metrics();

 private:
  struct Rendering {
    std::string body;
    std::optional<Clock::time_point> at;
  };
  const std::string& fresh(Rendering& rendering,
                           std::string (*render)(const proto::TrackerStatus&));

  StatusSource status_;
  Clock::duration max_age_;
  Rendering json_;
  Rendering metrics_;
};

}  // namespace loco::tracker
