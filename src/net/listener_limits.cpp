#include "loco/net/listener_limits.hpp"

#include "loco/core/error.hpp"

namespace loco::net {

ListenerLimits ListenerLimits::tracker_defaults() {
  // 16 pending per source lets a NAT'd lab join at once while one host holds 3% of the slots.
  return ListenerLimits{.max_handshakes = 512,
                        .max_waiting = 256,
                        .max_admitted = 4096,
                        .max_pending_per_source = 16,
                        .max_admitted_per_source = 256,
                        .handshake_timeout = std::chrono::seconds(5),
                        .bundle_timeout = std::chrono::seconds(10),
                        // A join request, the largest message a peer sends the tracker.
                        .max_buffered_bytes = std::uint64_t{64} << 10};
}

ListenerLimits ListenerLimits::peer_defaults() {
  // One member's bundle is at most kMaxStreams = 16 streams: it fits in one source's share.
  return ListenerLimits{.max_handshakes = 64,
                        .max_waiting = 128,
                        .max_admitted = 1024,
                        .max_pending_per_source = 16,
                        .max_admitted_per_source = 256,
                        .handshake_timeout = std::chrono::seconds(5),
                        .bundle_timeout = std::chrono::seconds(10),
                        // A few ring chunks (17 MiB each) partly received on a bundle's streams.
                        .max_buffered_bytes = std::uint64_t{64} << 20};
}

void validate(const ListenerLimits& l) {
  if (l.max_handshakes == 0 || l.max_waiting == 0 || l.max_admitted == 0 ||
      l.max_pending_per_source == 0 || l.max_admitted_per_source == 0 || l.max_buffered_bytes == 0)
    throw Error(ErrorCategory::config, "a listener limit of 0 would refuse every connection");
  if (l.handshake_timeout <= Duration::zero() || l.bundle_timeout <= Duration::zero())
    throw Error(ErrorCategory::config, "a listener timeout must be positive");
  if (l.handshake_timeout > l.bundle_timeout)
    throw Error(ErrorCategory::config,
                "the handshake timeout must not be longer than the bundle timeout, which counts "
                "from the same moment");
}

}  // namespace loco::net
