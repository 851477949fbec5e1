#include "tracker/status_renderer.hpp"

#include "tracker/status_json.hpp"
#include "tracker/status_metrics.hpp"

namespace loco::tracker {

const std::string& StatusRenderer::json() {
  return fresh(json_, render_status_json);
}

const std::string& StatusRenderer::metrics() {
  return fresh(metrics_, render_status_metrics);
}

const std::string& StatusRenderer::fresh(Rendering& rendering,
                                         std::string (*render)(const proto::TrackerStatus&)) {
  const auto now = Clock::now();
  if (!rendering.at || now - *rendering.at >= max_age_) {
    rendering.body = render(status_());
    rendering.at = now;
  }
  return rendering.body;
}

}  // namespace loco::tracker
