#pragma once
// How much a listener (bundle_listener.hpp) takes on at once, in all and from one source. Every
// accepted stream is in one phase: its handshake; then waiting for its bundle (its hello and its
// sibling streams); then admitted (its bundle is up, until the bundle ends). A stream that would
// go over a cap is closed at once (but for the table of handshakes: when it alone is full, the
// oldest handshake of the source holding the most is closed instead; BundleListener), and so is one
// still in its handshake, or still waiting for its bundle, at that phase's deadline (counted from
// accept). A source is an IPv4 address, or an IPv6 /64: one subscriber's usual allocation, so a
// single host cannot pass as many sources.

#include <cstddef>

#include "loco/core/time.hpp"

namespace loco::net {

struct ListenerLimits {
  std::size_t max_handshakes = 0;           // streams in their handshake, from every source
  std::size_t max_waiting = 0;              // authenticated streams waiting for their bundle
  std::size_t max_admitted = 0;             // streams of admitted bundles
  std::size_t max_pending_per_source = 0;   // streams in their handshake or waiting, one source
  std::size_t max_admitted_per_source = 0;  // streams of admitted bundles from one source
  Duration handshake_timeout{};
  Duration bundle_timeout{};  // a complete bundle, from accept
  // Bytes of partial messages one admitted bundle may make its owner hold at once
  // (MessageAssembler); the tracker: before the bundle's peer has joined.
  std::uint64_t max_buffered_bytes = 0;

  // A public host that every volunteer of a run connects to (one stream each).
  static ListenerLimits tracker_defaults();
  // A volunteer's own listener: only the members of its run connect, N streams each.
  static ListenerLimits peer_defaults();
};

// Throws Error(config) for a zero cap or timeout, or a handshake deadline after the bundle's.
void validate(const ListenerLimits& limits);

}  // namespace loco::net
