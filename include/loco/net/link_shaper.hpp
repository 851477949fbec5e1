#pragma once
// WAN link emulation in our own code, at the sender, so that it runs on loopback and in the
// simulator alike (this machine's kernel has no netem). A LinkShaper is one peer's access link;
// every connection of the peer gets its own LinkPacer from it (link_pacer.hpp) and all of them
// share the link's upload and download bandwidth, as connections through one home router do.
//
//   send:    chunk ready at `now`
//              -> faults (drop after N bytes / drop at T: close; stall from T: kNever)
//              -> upload TokenBucket (shared by the peer's connections): may leave at L
//              -> + one-way latency + jitter, jitter uniform in [-jitter, +jitter] from the
//                 connection's seed (loco::Rng), so a replay with the same seed is identical
//              -> release = max(previous release of this connection, L + latency + jitter):
//                 releases never decrease, because TCP delivers in order
//   receive: `bytes` read at `now` -> download TokenBucket: the next read starts when their
//            tokens have accrued (TCP flow control then slows the sender down)
//
// The driver must call on_send() when a chunk becomes ready, and may ask for several chunks
// before the first is released (it queues them with their release times, writes the head when
// its time comes, one write outstanding). A driver that waits for each release before it asks
// for the next chunk gets at most one chunk per latency: 64 KiB per 40 ms is 13 Mbit/s whatever
// the bandwidth. Keep at least bandwidth x (latency + jitter) bytes queued, plus a chunk or two.
//
// Bucket size (burst) for each direction: B = max(128 KiB, rate x 4 ms).
// - Accuracy: a transfer of S bytes that starts with a full bucket is released B/rate sooner
//   than S/rate, a relative error of B/S: 0.2% for 64 MiB at any rate up to 262 Mbit/s (where
//   B is 128 KiB), 0.75% at 1 Gbit/s (B = 500 kB); the 2% goal holds for 64 MiB up to 2.7
//   Gbit/s, and at 100 Mbit/s for anything from 6.4 MiB. Everything after the first B bytes
//   goes at exactly `rate` (see link_token_bucket.hpp).
// - Driver slack: a driver that asks for the next chunk (or read) only when the previous one
//   is done keeps the full rate if it keeps up on average (its mean delay per chunk is below
//   the chunk's transmit time: 5.2 ms for 64 KiB at 100 Mbit/s) and no single delay (timer
//   slack, a scheduling hiccup on a loaded machine) exceeds B/rate: the bucket refills while
//   the driver is late. B/rate is 10.5 ms at 100 Mbit/s and at least 4 ms at any rate; a delay
//   d beyond it loses d - B/rate. (A queueing driver, as above, computes its releases ahead
//   and is immune on upload.)
// - Chunks: the bucket never starves a chunk larger than B (a 1 MiB chunk waits for its own
//   tokens), and a lone small message after idle (a ping, a heartbeat) leaves without waiting.
//   Chunks of 16-64 KiB keep the granularity (one chunk's transmit time) at or below 5 ms at
//   100 Mbit/s, at one pacer call per chunk.
// Faults: drop-after-bytes counts the bytes this connection has sent; the chunk that would pass
// the limit is not sent (SendDecision{now, true}). drop-at and stall-at count from the shaper's
// `start`. A chunk that would be released at or after the drop time is answered with
// {drop time, true}: close the connection then (closing at once is early by at most latency +
// jitter). From the stall time on, on_send() and on_receive() return kNever and nothing leaves.
//
// Thread safety: the shared buckets are behind a mutex, so connections may run on different
// threads; one pacer is used by one connection at a time (calls with non-decreasing `now`).

#include <cstdint>
#include <memory>
#include <mutex>

#include "loco/core/time.hpp"
#include "loco/net/link_pacer.hpp"
#include "loco/net/link_settings.hpp"
#include "loco/net/link_token_bucket.hpp"

namespace loco::net {

class LinkShaper : public std::enable_shared_from_this<LinkShaper> {
 public:
  // Throws Error(config) if the settings are invalid (see validate()). `start` is the origin of
  // the fault times.
  static std::shared_ptr<LinkShaper> create(const LinkSettings& settings, TimePoint start);

  // A pacer for one connection; `seed` draws its jitter (give each connection its own).
  std::unique_ptr<LinkPacer> make_pacer(std::uint64_t seed);

  const LinkSettings& settings() const { return settings_; }
  TimePoint start() const { return start_; }

  // The bucket size used for `rate` (see the header comment).
  static std::uint64_t burst_bytes(BitRate rate);

  // Shared by this link's pacers.
  TimePoint grant_upload(TimePoint now, std::uint64_t bytes);
  TimePoint grant_download(TimePoint now, std::uint64_t bytes);

 private:
  LinkShaper(const LinkSettings& settings, TimePoint start);

  LinkSettings settings_;
  TimePoint start_;
  std::mutex mutex_;
  TokenBucket upload_;
  TokenBucket download_;
};

}  // namespace loco::net
