#include "tracker/failover_record.hpp"

namespace loco::tracker {

void FailoverRecord::saw(const replica::Leader& leader, std::uint64_t unix_ms) {
  seen_ = leader;
  seen_ms_ = unix_ms;
}

void FailoverRecord::took_lead(const replica::Leader& self, std::uint64_t unix_ms) {
  const bool known = seen_.term != 0;
  last_ = proto::Failover{
      .unix_ms = unix_ms,
      .from = seen_.value,
      .from_term = static_cast<std::uint64_t>(seen_.term),
      .to_term = static_cast<std::uint64_t>(self.term),
      // A wall clock stepped back between the two looks reads as no gap, not as years of one.
      .leaderless_ms = known && unix_ms > seen_ms_ ? unix_ms - seen_ms_ : 0,
  };
  saw(self, unix_ms);  // a term that ends before its first look still ends as this replica's
}

}  // namespace loco::tracker
