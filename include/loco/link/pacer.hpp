#pragma once
// The seam between a connection and WAN link emulation. A connection asks its pacer, before it
// hands bytes to the socket, when they may leave (upload bandwidth, latency, jitter, faults), and
// after a read, when it may read again (download bandwidth). Sans-I/O: the pacer is given `now`
// and never reads a clock, so the simulator can use the same implementation.
//
// Call order: on_send() for every chunk in the order the chunks are written; on_receive() after
// every completed read. A connection without link emulation has no pacer at all.
//
// Ask about each chunk as soon as it is queued and keep (chunk, release) in a queue: a sender that
// waits for one release before asking about the next chunk sends one chunk per latency (64 KiB
// per 40 ms is 13 Mbit/s, whatever the bandwidth). net::Connection does this.

#include <cstddef>

#include "loco/core/time.hpp"

namespace loco::link {

class LinkPacer {
 public:
  virtual ~LinkPacer() = default;

  struct SendDecision {
    TimePoint release;     // hand the chunk to the socket at this time (kNever: stall forever);
                           // never earlier than `now` or than the previous chunk's release
    bool drop_connection;  // fault injection: close the connection instead of sending
  };

  // `bytes` are ready to be written at `now`.
  virtual SendDecision on_send(TimePoint now, std::size_t bytes) = 0;

  // `bytes` were read at `now`; returns when the next read may start.
  virtual TimePoint on_receive(TimePoint now, std::size_t bytes) = 0;
};

}  // namespace loco::link
