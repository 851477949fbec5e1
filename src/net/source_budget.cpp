#include "loco/net/source_budget.hpp"

#include <fmt/format.h>

#include "loco/core/assert.hpp"

namespace loco::net {

std::string source_of(const boost::asio::ip::address& address) {
  if (address.is_v4()) return address.to_v4().to_string();
  const auto v6 = address.to_v6();
  if (v6.is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).to_string();
  auto bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), std::uint8_t{0});
  return boost::asio::ip::address_v6(bytes).to_string() + "/64";
}

SourceBudget::SourceBudget(const ListenerLimits& limits) : limits_(limits) {
  validate(limits_);
}

std::optional<std::string> SourceBudget::over_cap(StreamPhase phase,
                                                  const std::vector<std::string>& sources) const {
  const std::size_t total = totals_[index(phase)] + sources.size();
  switch (phase) {
    case StreamPhase::handshake:
      if (total > limits_.max_handshakes)
        return fmt::format("{} handshakes in progress", limits_.max_handshakes);
      break;
    case StreamPhase::waiting:
      if (total > limits_.max_waiting)
        return fmt::format("{} streams waiting for their bundles", limits_.max_waiting);
      break;
    case StreamPhase::admitted:
      if (total > limits_.max_admitted)
        return fmt::format("{} streams admitted", limits_.max_admitted);
      break;
  }
  // Only entering the handshake adds to a source's pending count (waiting was counted then), and
  // only admission adds to its admitted count.
  if (phase == StreamPhase::waiting) return std::nullopt;
  std::map<std::string, std::size_t> adding;
  for (const std::string& source : sources) ++adding[source];
  for (const auto& [source, n] : adding) {
    if (phase == StreamPhase::handshake &&
        pending_from(source) + n > limits_.max_pending_per_source)
      return fmt::format("{} streams from {} in their handshake or waiting for their bundle",
                         limits_.max_pending_per_source, source);
    if (phase == StreamPhase::admitted &&
        admitted_from(source) + n > limits_.max_admitted_per_source)
      return fmt::format("{} streams admitted from {}", limits_.max_admitted_per_source, source);
  }
  return std::nullopt;
}

std::size_t SourceBudget::pending_from(const std::string& source) const {
  const auto it = by_source_.find(source);
  return it == by_source_.end() ? 0 : it->second.pending;
}

std::size_t SourceBudget::admitted_from(const std::string& source) const {
  const auto it = by_source_.find(source);
  return it == by_source_.end() ? 0 : it->second.admitted;
}

void SourceBudget::enter(const std::string& source, StreamPhase phase) {
  ++totals_[index(phase)];
  Counts& counts = by_source_[source];
  ++(phase == StreamPhase::admitted ? counts.admitted : counts.pending);
  check_invariant();
}

void SourceBudget::leave(const std::string& source, StreamPhase phase) {
  const auto it = by_source_.find(source);
  LOCO_ASSERT(it != by_source_.end() && totals_[index(phase)] > 0, "a slot leaves twice");
  --totals_[index(phase)];
  std::size_t& count = phase == StreamPhase::admitted ? it->second.admitted : it->second.pending;
  LOCO_ASSERT(count > 0, "a slot leaves a phase its source is not in");
  --count;
  if (it->second.pending == 0 && it->second.admitted == 0) by_source_.erase(it);
  check_invariant();
}

void SourceBudget::check_invariant() const {
#ifndef NDEBUG
  std::size_t pending = 0, admitted = 0;
  for (const auto& [source, counts] : by_source_) {
    LOCO_ASSERT(counts.pending + counts.admitted > 0, "an empty source is kept");
    pending += counts.pending;
    admitted += counts.admitted;
  }
  LOCO_ASSERT(
      pending == totals_[index(StreamPhase::handshake)] + totals_[index(StreamPhase::waiting)] &&
          admitted == totals_[index(StreamPhase::admitted)],
      "per-source counts disagree with the totals");
#endif
}

StreamSlot::StreamSlot(std::shared_ptr<SourceBudget> budget, std::string source)
    : budget_(std::move(budget)), source_(std::move(source)) {
  budget_->enter(source_, phase_);
}

void StreamSlot::move_to(StreamPhase phase) {
  if (released_ || phase == phase_) return;
  budget_->leave(source_, phase_);
  phase_ = phase;
  budget_->enter(source_, phase_);
}

void StreamSlot::release() {
  if (released_) return;
  released_ = true;
  budget_->leave(source_, phase_);
}

}  // namespace loco::net
