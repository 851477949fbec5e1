#pragma once
// What an emulated WAN link looks like: one peer's access link (its upload and download
// bandwidth), the one-way latency and jitter of its paths, and faults to inject. Config:
//
//   [link]
//   upload = "100Mbit"        # bandwidth of everything this peer sends (see link/units.hpp)
//   download = "200Mbit"      # bandwidth of everything it receives
//   latency = "40ms"          # one-way delay added to every chunk this peer sends
//   jitter = "5ms"            # each chunk's delay is latency ± up to jitter (uniform)
//   loss = 0.01               # each chunk is lost with this probability and retransmitted
//   stream-window = "256KiB"  # each connection has at most this many bytes unacknowledged
//   drop-after-bytes = "1MiB" # close each connection once it would send more than this
//   drop-at = "30s"           # close every connection at this time after the link starts
//   stall-at = "30s"          # from this time on nothing is sent or read (no close)
//
// Defaults: no limit, no delay, no window, no fault. LinkShaper (shaper.hpp) applies the
// settings.

#include <cstdint>
#include <optional>
#include <string>

#include "loco/core/time.hpp"
#include "loco/link/units.hpp"

namespace loco::link {

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
  // Each chunk is lost with this probability, in [0, kMaxLoss]. Above TCP a loss is a delay, not
  // a gap: the chunk arrives one retransmission timeout later (each further loss of the same
  // chunk doubles it), and the chunks behind it on its connection wait for it (shaper.hpp).
  double loss = 0;
  // A TCP stream's window: bytes a connection may have sent and not yet seen acknowledged (at
  // least kMinStreamWindow). Unset: no limit. One connection then gets at most
  // stream_window / (2 x latency), jitter aside; see shaper.hpp.
  std::optional<std::uint64_t> stream_window;
  LinkFaults faults;

  // True when these settings change nothing (a connection then needs no pacer at all).
  bool is_transparent() const {
    return upload == kUnlimited && download == kUnlimited && latency == Duration{0} &&
           jitter == Duration{0} && loss == 0 && !stream_window && !faults.drop_after_bytes &&
           !faults.drop_at && !faults.stall_at;
  }
};

// Limits that keep a typo from becoming a silent hour-long wait.
inline constexpr Duration kMaxLatency = std::chrono::seconds(10);
inline constexpr Duration kMaxFaultTime = std::chrono::hours(24 * 7);
inline constexpr double kMaxLoss = 0.5;
// TCP's retransmission timeout: the round trip plus four times its variation, at least 200 ms
// (Linux's minimum, RFC 6298 says 1 s).
inline constexpr Duration kMinRetransmitTimeout = std::chrono::milliseconds(200);
Duration retransmit_timeout(const LinkSettings& settings);
// The smallest stream window: one paced piece (net::Connection::kPacedPieceBytes, 64 KiB). A
// smaller window would hold less than one piece, and the pacer lets a piece larger than the
// window go alone (so that it is not starved): the link would carry 64 KiB per round trip
// whatever window was configured.
inline constexpr std::uint64_t kMinStreamWindow = std::uint64_t{64} << 10;

// Throws Error(config) when the settings contradict each other (jitter above latency) or
// exceed the limits above (a stream window below kMinStreamWindow).
void validate(const LinkSettings& settings);

// One line for logs, e.g. "upload 100Mbit, download unlimited, latency 40ms +/- 5ms, stream
// window 262144 bytes, drop after 1048576 bytes" (the window and faults only when set).
std::string describe(const LinkSettings& settings);

}  // namespace loco::link
