#pragma once
// A live loco-tracker's /metrics, read over HTTP: its samples by name.

#include <map>
#include <sstream>
#include <string>

#include "http_client.hpp"

namespace loco::test {

// The samples of a Prometheus text page, by name (with its labels, if any).
inline std::map<std::string, double> metric_samples(const std::string& page) {
  std::map<std::string, double> samples;
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.starts_with('#')) continue;
    const auto space = line.find(' ');
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

// The samples of /metrics read over `client` (connected to a tracker's status page); empty when the
// request failed.
inline std::map<std::string, double> read_metrics(TestClient& client) {
  const auto reply = client.get("/metrics");
  if (reply.error) return {};
  return metric_samples(reply.response.body());
}

}  // namespace loco::test
