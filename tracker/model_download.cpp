#include "tracker/model_download.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "loco/core/error.hpp"

namespace loco::tracker {

void validate(const DownloadLimits& limits) {
  const auto refuse = [](const std::string& what) { throw Error(ErrorCategory::config, what); };
  if (limits.max_downloads < 1 || limits.max_downloads > 1000)
    refuse(fmt::format("model downloads at once: {} is not in 1..1000", limits.max_downloads));
  if (limits.max_waiting < 1 || limits.max_waiting > 100'000)
    refuse(
        fmt::format("addresses in line for the model: {} is not in 1..100000", limits.max_waiting));
  if (limits.floor_bytes_per_second < 128)
    refuse(fmt::format("model download floor: {} bytes a second is below 1kbit",
                       limits.floor_bytes_per_second));
  if (limits.hold <= std::chrono::milliseconds::zero() ||
      limits.grace <= std::chrono::milliseconds::zero())
    refuse("model download hold and grace must be positive");
}

ModelGate::ModelGate(ModelSource source, DownloadLimits limits)
    : source_(std::move(source)), limits_(limits) {
  validate(limits_);
}

ModelGate::Answer ModelGate::refuse(std::size_t position, bool already) const {
  return Answer{.lease = {},
                .retry_after = limits_.hold / 3,
                .position = position,
                .already = already,
                .downloads = active_.size()};
}

ModelGate::Answer ModelGate::take(const std::string& address, Clock::time_point now) {
  std::shared_ptr<const ModelDownload> model = source_ ? source_() : nullptr;
  if (!model) return {};
  std::erase_if(line_, [&](const Waiter& w) { return now - w.asked > limits_.hold; });
  if (active_.contains(address)) return refuse(0, /*already=*/true);
  // The first `free` in line have a place each; a newcomer has one when they all fit before it.
  const std::size_t free = limits_.max_downloads - active_.size();
  const auto in_line = std::find_if(line_.begin(), line_.end(),
                                    [&](const Waiter& w) { return w.address == address; });
  const auto position = static_cast<std::size_t>(in_line - line_.begin());
  if (position < free) {
    if (in_line != line_.end()) line_.erase(in_line);
    active_.insert(address);
    Answer answer;
    answer.lease = Lease(this, address, std::move(model));
    answer.downloads = active_.size();
    return answer;
  }
  if (in_line != line_.end()) {
    in_line->asked = now;
    return refuse(position + 1, false);
  }
  if (line_.size() >= limits_.max_waiting) return refuse(0, false);  // the line is full
  line_.push_back(Waiter{.address = address, .asked = now});
  return refuse(line_.size(), false);
}

ModelGate::Lease::Lease(Lease&& other) noexcept
    : gate_(std::exchange(other.gate_, nullptr)),
      address_(std::move(other.address_)),
      model_(std::move(other.model_)) {}

ModelGate::Lease& ModelGate::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    reset();
    gate_ = std::exchange(other.gate_, nullptr);
    address_ = std::move(other.address_);
    model_ = std::move(other.model_);
  }
  return *this;
}

ModelGate::Lease::~Lease() {
  reset();
}

void ModelGate::Lease::reset() {
  if (gate_ != nullptr) gate_->active_.erase(address_);
  gate_ = nullptr;
  model_.reset();
}

}  // namespace loco::tracker
