#pragma once
// WAN link emulation in our own code, at the sender, so that it runs on loopback and in the
// simulator alike (this machine's kernel has no netem). A LinkShaper is one peer's access link;
// every connection of the peer gets its own LinkPacer from it (pacer.hpp) and all of them
// share the link's upload and download bandwidth, as connections through one home router do.
//
//   send:    chunk ready at `now`
//              -> faults (drop after N bytes / drop at T: close; stall from T: kNever)
//              -> stream window (per connection, if set): the chunk enters at E, the first
//                 time >= now and >= the previous chunk's E at which the connection's
//                 unacknowledged bytes plus its own are at most the window
//              -> upload TokenBucket (shared by the peer's connections): bytes ready at E may
//                 leave at L >= E. A new flow's chunk (the connection had none of its bytes
//                 in the bucket at E, and has sent at most kNewFlowQuantumBytes since) goes
//                 ahead of the queued bytes instead: L = min(that, the chunk's own transmit
//                 time through the new-flow lane), and the bucket is charged for it all the same
//              -> + one-way latency + jitter, jitter uniform in [-jitter, +jitter] from the
//                 connection's seed (loco::Rng), so a replay with the same seed is identical
//              -> + loss: with probability `loss` the chunk is lost and retransmitted one
//                 retransmit_timeout() later (settings.hpp), again with the same probability
//                 (each further timeout doubles), from the same seed
//              -> release = max(previous release of this connection, L + latency + jitter + loss):
//                 releases never decrease, because TCP delivers in order
//              -> acknowledged at release + latency (the configured latency: no jitter back)
//   receive: `bytes` read at `now` -> download TokenBucket: the next read starts when their
//            tokens have accrued (TCP flow control then slows the sender down)
//
// The driver must call on_send() when a chunk becomes ready, and may ask for several chunks
// before the first is released (it queues them with their release times, writes the head when
// its time comes, one write outstanding). A driver that waits for each release before it asks
// for the next chunk gets at most one chunk per latency: 64 KiB per 40 ms is 13 Mbit/s whatever
// the bandwidth. Keep at least bandwidth x (latency + jitter + the driver's worst scheduling
// delay) bytes queued, plus a chunk or two.
//
// Bucket size (burst) B = max(512 KiB, rate x 5 ms) in each direction; buckets start empty.
// - Accuracy: on a new link, a transfer of S bytes goes at exactly `rate` from its first byte
//   and ends at the ideal S/rate. After the link idled for B/rate or more, the bucket is full:
//   the first B bytes leave at once and the transfer ends B/rate sooner (as with tbf), a
//   relative error of B/S: 0.8% for 64 MiB at any rate up to 839 Mbit/s (B = 512 KiB), 0.93%
//   at 1 Gbit/s (B = 625 kB); the 2% goal holds for 64 MiB up to 2.1 Gbit/s, and at 100
//   Mbit/s for transfers of 25.6 MiB or more (5% from 10.2 MiB).
// - Driver slack: a driver that asks for the next chunk (or read) only when the previous one
//   is done keeps the full rate as long as no single delay (timer slack, a scheduling hiccup)
//   exceeds B/rate, because the bucket fills while the driver is late and the following
//   chunks go at once: 42 ms at 100 Mbit/s, at least 5 ms at any rate. A delay d beyond that
//   loses d - B/rate. This machine (2 cores shared by many builds, load average 12) wakes
//   timers 4-8 ms late at the median with a tail past 10 ms; with B = 128 KiB (10.5 ms at 100
//   Mbit/s) a sequential reader lost 18-36% of its rate here. (A queueing sender, as above,
//   computes releases ahead and tolerates delays up to its queue's length in time plus B/rate.)
// - Chunks: the bucket never starves a chunk larger than B (a 1 MiB chunk waits for its own
//   tokens), and a lone small message (a ping, a heartbeat) waits only its own transmit time.
// - Download: the pacer can only delay the next read, and a read takes whatever the kernel
//   holds up to the reader's buffer, so the buffer size adds to the download burst: keep reads
//   at 64-256 KiB.
// - Cost: one call per chunk, under 0.5 us (measured on the loaded machine), i.e. under 0.01%
//   of a 64 KiB chunk's 5.2 ms at 100 Mbit/s.
//
// Stream window W (LinkSettings::stream_window): on a real WAN one TCP flow carries at most
// its window per round trip, whatever the access link's bandwidth; that is why loco opens
// several streams per peer pair. A chunk holds its place in the window from E until its
// acknowledgement at release + latency, i.e. at L + 2 x latency + jitter or later (the
// in-order hold): bytes queued in the upload bucket count, as bytes queued at a real
// bottleneck count against a real window. So
//   one connection  <=  W / (2 x latency + time queued in the bucket)   (exact without jitter:
//                       256 KiB at 20 ms is 52.4288 Mbit/s; jitter shortens a round trip by up
//                       to `jitter` and the in-order hold lengthens it)
//   N connections   <=  min(N x W / (2 x latency), upload rate)
// A chunk larger than the window waits until nothing is unacknowledged and then goes alone,
// so it is never starved (the window's minimum, one 64 KiB paced piece, keeps this the
// exception). The pacer knows E when it is asked, at `now`, and E may be later: it must not
// pass E to the shared bucket as `now`, which would restart the bucket at E and queue every
// other connection's ready bytes behind bytes that cannot go yet. It reserves instead:
// TokenBucket::grant(now, E, bytes) takes the earliest capacity free from E on and leaves the
// capacity before E to the others (token_bucket.hpp). The bucket hands capacity out in
// call order, so a connection that asks far ahead (net::Connection asks about up to 4 MiB)
// keeps its reservations and the others fill around them: in virtual time four 256 KiB windows
// on a 100 Mbit/s, 20 ms link use 99.9-100% of the link while all four send, and 32 MiB end
// 1.4% (1 MiB asked ahead) to 2.6% (4 MiB) after the ideal, because the connection that asked
// first finishes first and the last one finishes alone (stream_window_test.cpp).
//
// New flows go ahead (fq_codel's sparse-flow priority). The peer's connections meet in its
// router's uplink queue, and modern routers and Linux default to fq_codel (cake on some): a
// queue per flow served round robin, and a flow that arrives with nothing queued is served
// ahead of the bulk flows for one quantum. So a new link's handshake and hello, a heartbeat or
// a vote leave within a packet time or two however much the other connections have queued;
// behind a FIFO they would wait for all of it. The bucket here is that queue, but the bulk
// flows' queued bytes are reservations whose release times were already handed out and cannot
// move. So a connection that had nothing in the bucket when a chunk enters (a new flow) sends
// up to kNewFlowQuantumBytes (4 KiB: every handshake and control message; fq_codel's quantum is
// one 1514-byte packet, but a chunk here is a whole message piece) through a lane of its own at
// the upload rate, ahead of the queue: new flows among themselves never exceed the rate, and a
// new flow's message takes its own transmit time as on an idle link. Its bytes are still
// charged to the bucket at the first free capacity, so the bulk queued after them ends later by
// exactly their transmit time, as bulk behind fq waits for the sparse packet: the rate over a
// transfer is kept. What it costs: while new flows' bytes go, the link briefly carries more
// than its rate (at most the quantum per new flow, and at most the rate again over the lane);
// beyond its quantum, or behind its own queued bytes, a connection waits its turn in call order
// (fq would give it an equal share instead). net::Connection asks only a little ahead of its
// socket (two pieces, or 100 ms), so two bulk connections take turns piece by piece, near an
// equal share; a driver that asked about its whole queue at once would hold the others behind it.
// Found in CI (test_peer_killed.py): a 120 kbit/s peer whose round data was queued opened a link
// that missed the listener's 5 s handshake deadline behind it. Bounding how far ahead bulk may
// reserve would be a FIFO with a bounded buffer and would not do: at 120 kbit/s one 64 KiB piece
// alone takes 4.4 s; nor would a handshake deadline scaled by the rate, which a real link without
// such a queue does not need.
//
// Faults: drop-after-bytes counts the bytes this connection has sent; the chunk that would pass
// the limit is not sent (SendDecision{now, true}). drop-at and stall-at count from the shaper's
// `start`. A chunk asked about after the drop time gets {now, true}; one that would be released
// at or after the drop time gets {drop time, true}: close the connection then (closing at once is
// early by at most latency + jitter). From the stall time on, on_send() and on_receive() return
// kNever and nothing leaves.
//
// Thread safety: the shared buckets are behind a mutex, so connections may run on different
// threads; one pacer is used by one connection at a time (calls with non-decreasing `now`).

#include <cstdint>
#include <memory>
#include <mutex>

#include "loco/core/time.hpp"
#include "loco/link/pacer.hpp"
#include "loco/link/settings.hpp"
#include "loco/link/token_bucket.hpp"

namespace loco::link {

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

  // A connection with nothing in the upload bucket (a new flow) may send this many bytes ahead
  // of the others' queued bytes before it queues like them (see the header comment).
  static constexpr std::uint64_t kNewFlowQuantumBytes = 4 * 1024;

  // Shared by this link's pacers. Upload bytes asked about at `now` are ready at `at` >= now
  // (later when a stream window holds them back; TokenBucket::grant).
  TimePoint grant_upload(TimePoint now, TimePoint at, std::uint64_t bytes);
  // The same for a new flow's chunk: it goes ahead of the queued bytes, through a lane of its own
  // at the upload rate, and its capacity is charged to the upload bucket all the same.
  TimePoint grant_upload_ahead(TimePoint now, TimePoint at, std::uint64_t bytes);
  TimePoint grant_download(TimePoint now, std::uint64_t bytes);

 private:
  LinkShaper(const LinkSettings& settings, TimePoint start);

  LinkSettings settings_;
  TimePoint start_;
  std::mutex mutex_;
  TokenBucket upload_;
  TokenBucket new_flow_lane_;  // upload rate, no burst: new flows' chunks among themselves
  TokenBucket download_;
};

}  // namespace loco::link
