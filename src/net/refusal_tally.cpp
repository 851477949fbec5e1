#include "loco/net/refusal_tally.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace loco::net {

RefusalTally::RefusalTally(Duration period, std::size_t max_sources)
    : RefusalTally(period, max_sources, 0, Wording{.verb = "dropped", .noun = "connections"}) {}

RefusalTally::RefusalTally(Duration period, std::size_t max_sources, std::size_t in_full_per_source,
                           Wording wording)
    : period_(period),
      max_sources_(max_sources),
      in_full_per_source_(in_full_per_source),
      wording_(std::move(wording)) {}

bool RefusalTally::add(TimePoint now, const std::string& source, std::string_view reason) {
  if (sources_.empty()) started_ = now;
  ++total_;
  Source& counts = sources_[source];
  ++counts.total;
  const auto it = counts.by_reason.find(reason);
  if (it == counts.by_reason.end()) {
    counts.by_reason.emplace(std::string(reason), 1);
  } else {
    ++it->second;
  }
  return in_full_per_source_ > 0 ? counts.total <= in_full_per_source_ : total_ == 1;
}

TimePoint RefusalTally::poll_timeout() const {
  return sources_.empty() ? kNever : started_ + period_;
}

std::vector<std::string> RefusalTally::take_summary(TimePoint now) {
  if (sources_.empty() || now < started_ + period_) return {};
  return flush(now);
}

std::vector<std::string> RefusalTally::flush(TimePoint now) {
  std::vector<std::string> lines;
  if (total_ > 1) {
    std::vector<std::pair<std::string, Source>> busiest(sources_.begin(), sources_.end());
    std::stable_sort(busiest.begin(), busiest.end(),
                     [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
    // A source whose every refusal was logged in full needs no summary.
    std::erase_if(busiest,
                  [&](const auto& entry) { return entry.second.total <= in_full_per_source_; });
    const std::size_t listed = std::min(busiest.size(), max_sources_);
    for (std::size_t i = 0; i < listed; ++i) {
      const auto& [source, counts] = busiest[i];
      std::vector<std::string> reasons;
      for (const auto& [reason, n] : counts.by_reason)
        reasons.push_back(fmt::format("{} {}", n, reason));
      lines.push_back(fmt::format("{} {} {} from {} in the last {} s: {}", wording_.verb,
                                  counts.total, wording_.noun, source, seconds,
                                  fmt::join(reasons, ", ")));
    }
    std::size_t rest = 0;
    for (std::size_t i = listed; i < busiest.size(); ++i) rest += busiest[i].second.total;
    if (rest > 0)
      lines.push_back(fmt::format("{} {} more {} from {} other sources in the last {} s",
                                  wording_.verb, rest, wording_.noun, busiest.size() - listed,
                                  seconds));
  }
  total_ = 0;
  started_ = kNever;
  sources_.clear();
  return lines;
}

}  // namespace loco::net
