#pragma once
// What an emulated WAN link looks like: one peer's access link (its upload and download
// bandwidth), the one-way latency and jitter of its paths, and faults to inject. Config:
//
//   [link]
//   upload = "100Mbit"        # bandwidth of everything this peer sends (see net/units.hpp)
//   download = "200Mbit"      # bandwidth of everything it receives
//   latency = "40ms"          # one-way delay added to every chunk this peer sends
//   jitter = "5ms"            # each chunk's delay is latency ± up to jitter (uniform)
//   drop-after-bytes = "1MiB" # close each connection once it would send more than this
//   drop-at = "30s"           # close every connection at this time after the link starts
//   stall-at = "30s"          # from this time on nothing is sent or read (no close)
//
// Defaults: no limit, no delay, no fault. LinkShaper (link_shaper.hpp) applies the settings.

#include <cstdint>
#include <optional>

#include "loco/core/time.hpp"
#include "loco/net/units.hpp"

namespace loco::net {

struct LinkFaults {
  std::optional<std::uint64_t> drop_after_bytes;  // per connection, bytes this side sends
  std::optional<Duration> drop_at;                // since the link started
  std::optional<Duration> stall_at;               // since the link started
};

struct LinkSettings {
  BitRate upload = kUnlimited;
  BitRate download = kUnlimited;
  Duration latency{0};
  Duration jitter{0};  // at most `latency`: a chunk never leaves before it was written
  LinkFaults faults;

  // True when these settings change nothing (a connection then needs no pacer at all).
  bool is_transparent() const {
    return upload == kUnlimited && download == kUnlimited && latency == Duration{0} &&
           jitter == Duration{0} && !faults.drop_after_bytes && !faults.drop_at && !faults.stall_at;
  }
};

// Limits that keep a typo from becoming a silent hour-long wait.
inline constexpr Duration kMaxLatency = std::chrono::seconds(10);
inline constexpr Duration kMaxFaultTime = std::chrono::hours(24 * 7);

// Throws Error(config) when the settings contradict each other (jitter above latency) or
// exceed the limits above.
void validate(const LinkSettings& settings);

}  // namespace loco::net
