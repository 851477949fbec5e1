#include "held_until_saved.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"
#include "send_queue.hpp"

namespace loco::tracker {

HeldUntilSaved::HeldUntilSaved(Start start, Release release)
    : start_(std::move(start)), release_(std::move(release)) {}

void HeldUntilSaved::changed(proto::TrackerSnapshot state) {
  if (failed_) return;
  check_invariant();
  ++changed_;
  if (under_way_ == 0) {
    begin(changed_, std::move(state));
  } else {
    next_.emplace(changed_, std::move(state));  // covers the one it replaces
  }
  check_invariant();
}

void HeldUntilSaved::begin(Version version, proto::TrackerSnapshot state) {
  under_way_ = version;
  start_(version, std::move(state));  // may call finished() before it returns
}

void HeldUntilSaved::send(proto::Transmit transmit) {
  if (failed_) return;
  if (saved_ == changed_) return release_(std::move(transmit));
  held_.emplace_back(changed_, std::move(transmit));
}

void HeldUntilSaved::finished(Version version, bool saved) {
  LOCO_ASSERT(!failed_ && version != 0 && version == under_way_,
              "a save finished that was not under way");
  check_invariant();
  under_way_ = 0;
  if (!saved) {
    failed_ = true;
    held_.clear();
    next_.reset();
    return;
  }
  saved_ = version;
  // Released before the next save starts: a save finished within `start` releases after these.
  while (!held_.empty() && held_.front().first <= saved_) {
    proto::Transmit transmit = std::move(held_.front().second);
    held_.pop_front();
    release_(std::move(transmit));
  }
  if (next_) {
    auto [next, state] = std::move(*next_);
    next_.reset();
    begin(next, std::move(state));
  }
  check_invariant();
}

void HeldUntilSaved::drop(const proto::PeerKey& key) {
  std::erase_if(held_, [&](const auto& waiting) {
    return waiting.second.to == key && !SendQueue::is_reply(waiting.second.type);
  });
}

bool HeldUntilSaved::holds(const proto::PeerKey& key) const {
  return std::any_of(held_.begin(), held_.end(),
                     [&](const auto& waiting) { return waiting.second.to == key; });
}

void HeldUntilSaved::check_invariant() const {
#ifndef NDEBUG
  LOCO_ASSERT(saved_ <= changed_, "a version saved that never was");
  LOCO_ASSERT(under_way_ == 0 || (saved_ < under_way_ && under_way_ <= changed_),
              "the save under way is not of an unsaved version");
  LOCO_ASSERT(!next_ || (under_way_ != 0 && next_->first > under_way_),
              "a next save without one under way, or older than it");
  Version previous = saved_ + 1;
  for (const auto& waiting : held_) {
    LOCO_ASSERT(waiting.first >= previous, "held out of version order, or already saved");
    previous = waiting.first;
  }
#endif
}

}  // namespace loco::tracker
