#pragma once
// GET /metrics: a TrackerStatus in Prometheus's text exposition format (version 0.0.4): run-wide
// gauges and counters, then one gauge or counter per member with a `peer` label. docs/TRACKER.md
// lists the names.

#include <string>

#include "loco/proto/tracker_status.hpp"

namespace loco::tracker {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string render_status_metrics(const proto::TrackerStatus& status);

}  // namespace loco::tracker
