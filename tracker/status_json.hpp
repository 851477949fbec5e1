#pragma once
// GET /status: a TrackerStatus as one JSON object. The schema is in docs/TRACKER.md; keys are the
// struct's fields in snake_case, non-finite numbers are null, and text from peers that is not
// valid UTF-8 has those bytes replaced by U+FFFD, so the document is always valid JSON.

#include <string>

#include "loco/proto/tracker_status.hpp"

namespace loco::tracker {

std::string render_status_json(const proto::TrackerStatus& status);

}  // namespace loco::tracker
