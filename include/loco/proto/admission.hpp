#pragma once
// The tracker's admission rules as pure functions: whether a joining peer may enter the run, and
// if not, the reason it is told.

#include <optional>
#include <string>
#include <vector>

#include "loco/proto/tracker_config.hpp"

namespace loco::proto {

// The refusal for a peer with `key` presenting `credential` under `policy`, or nothing.
std::optional<std::string> admission_refusal(const AdmissionPolicy& policy,
                                             const secure::PublicKey& key,
                                             const std::string& credential);

// The refusal for a peer whose settings differ from the run's, naming the first that differs
// (missing, extra, or another value), or nothing.
std::optional<std::string> settings_refusal(const std::vector<Setting>& run,
                                            const std::vector<Setting>& peer);

}  // namespace loco::proto
