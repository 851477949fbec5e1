#pragma once
// Turns a flood of refusals (or of any warnings about a source) into a few log lines. The first
// refusal of a period is logged in full, at once (with first_per_source, the first of each
// source); every other refusal is counted by source and reason, and when the period ends the
// counts become one line per source ("dropped 512 connections from 10.0.0.5 in the last 10 s:
// 500 over a cap, 12 bundle not complete in time"; the verb and the noun are the wording's), the
// busiest sources first, at most `max_sources` of them and one line for the rest. A period starts
// with its first refusal.
//
// Sans-I/O: the caller passes the time, arms a timer for poll_timeout(), calls take_summary()
// when it fires, and logs the lines. Call order: add() any number of times; poll_timeout() after
// it; take_summary(now) at or after that time (earlier it returns nothing: harmless).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "loco/core/time.hpp"

namespace loco::net {

class RefusalTally {
 public:
  struct Wording {
    std::string verb;  // "dropped"
    std::string noun;  // "connections"
  };

  // Refused connections, the first of a period in full.
  explicit RefusalTally(Duration period = std::chrono::seconds(10), std::size_t max_sources = 8);
  // The first `in_full_per_source` of each source's in a period logged in full (0: only the
  // period's first, whatever its source).
  RefusalTally(Duration period, std::size_t max_sources, std::size_t in_full_per_source,
               Wording wording);

  // Counts one refusal; true when it should be logged in full (the first of its period, or of its
  // source's).
  bool add(TimePoint now, const std::string& source, std::string_view reason);
  // The end of the current period, or kNever when nothing is counted.
  TimePoint poll_timeout() const;
  // Once the period has ended: its summary lines (none if only its first refusal happened, which
  // was logged in full), and the next refusal starts a new period.
  std::vector<std::string> take_summary(TimePoint now);
  // The same, whether or not the period has ended (a listener that stops).
  std::vector<std::string> flush(TimePoint now);

 private:
  struct Source {
    std::size_t total = 0;
    std::map<std::string, std::size_t, std::less<>> by_reason;
  };

  Duration period_;
  std::size_t max_sources_;
  std::size_t in_full_per_source_;
  Wording wording_;
  TimePoint started_ = kNever;
  std::size_t total_ = 0;
  std::map<std::string, Source> sources_;
};

}  // namespace loco::net
