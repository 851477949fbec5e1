#include "tracker/model_download.hpp"

namespace loco::tracker {

ModelGate::Answer ModelGate::take(Clock::time_point now) {
  if (!source_) return {};
  if (last_ && now < *last_ + interval_)
    return Answer{.model = nullptr, .retry_after = *last_ + interval_ - now};
  std::shared_ptr<const ModelDownload> model = source_();
  if (model) last_ = now;
  return Answer{.model = std::move(model), .retry_after = {}};
}

}  // namespace loco::tracker
