#include "loco/net/refusal_tally.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace loco::net {

RefusalTally::RefusalTally(Duration period, std::size_t max_sources)
    : period_(period), max_sources_(max_sources) {}

bool RefusalTally::add(TimePoint now, const std::string& source, std::string_view reason) {
  const bool first = total_ == 0;
  if (first) started_ = now;
  ++total_;
  Source& counts = sources_[source];
  ++counts.total;
  const auto it = counts.by_reason.find(reason);
  if (it == counts.by_reason.end()) {
    counts.by_reason.emplace(std::string(reason), 1);
  } else {
    ++it->second;
  }
  return first;
}

TimePoint RefusalTally::poll_timeout() const {
  return total_ == 0 ? kNever : started_ + period_;
}

std::vector<std::string> RefusalTally::take_summary(TimePoint now) {
  if (total_ == 0 || now < started_ + period_) return {};
  return flush(now);
}

std::vector<std::string> RefusalTally::flush(TimePoint now) {
  std::vector<std::string> lines;
  if (total_ > 1) {
    std::vector<std::pair<std::string, Source>> busiest(sources_.begin(), sources_.end());
    std::stable_sort(busiest.begin(), busiest.end(),
                     [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
    const std::size_t listed = std::min(busiest.size(), max_sources_);
    for (std::size_t i = 0; i < listed; ++i) {
      const auto& [source, counts] = busiest[i];
      std::vector<std::string> reasons;
      for (const auto& [reason, n] : counts.by_reason)
        reasons.push_back(fmt::format("{} {}", n, reason));
      lines.push_back(fmt::format("dropped {} connections from {} in the last {} s: {}",
                                  counts.total, source, seconds, fmt::join(reasons, ", ")));
    }
    std::size_t rest = 0;
    for (std::size_t i = listed; i < busiest.size(); ++i) rest += busiest[i].second.total;
    if (rest > 0)
      lines.push_back(
          fmt::format("dropped {} more connections from {} other sources in the last "
                      "{} s",
                      rest, busiest.size() - listed, seconds));
  }
  total_ = 0;
  started_ = kNever;
  sources_.clear();
  return lines;
}

}  // namespace loco::net
