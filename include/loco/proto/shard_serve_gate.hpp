#pragma once
// What serving dataset shards to other members may take of a peer's upstream (issue 46;
// docs/PROTOCOL.md, "Dataset shards between peers"), sans-I/O: the time comes in as `now`.
//
// Two bounds over every asker together (ShardServer's share bounds each asker alone): a rate,
// `bytes_per_second`, and `max_pieces` pieces in progress at once (being read from disk or waiting
// for their time to go), which bounds the memory they hold. A piece goes once the pieces admitted
// before it have had their time at the rate (at once when the server has been idle that long), so
// what is sent from any time t0 to t is at most bytes_per_second * (t - t0) plus one piece; idle
// time is not saved up. A piece is admitted with the time it may go, or refused as busy: when
// max_pieces are in progress, or when it would wait past `max_wait` (an asker gives up on a piece
// after 30 s, host/peer_shards.hpp: better it asks its next source at once). A refused piece takes
// nothing. A busy refusal is no fault of the server's: the asker asks its next source, and asks
// this peer again for its next shard (fetch/dataset_fetch.hpp blames a peer for bad bytes only).
//
// The times admitted are non-decreasing in call order, so pieces go in the order admitted. (A
// token bucket, link/token_bucket.hpp, would save idle time up to a burst; proto may not use
// link/, and a piece's own size is the burst that matters here.)

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "loco/core/time.hpp"

namespace loco::proto {

struct ServeLimits {
  std::uint64_t bytes_per_second = 0;  // 0: no rate cap
  std::size_t max_pieces = 4;          // of at most kMaxPieceBytes each: 4 MiB held at most
  Duration max_wait = std::chrono::seconds(10);
};

class ServeGate {
 public:
  explicit ServeGate(ServeLimits limits) : limits_(limits) {}

  // A piece of `bytes` (at most kMaxPieceBytes) asked for at `now`: the time it may go (>= now),
  // counted in progress until finished(); or nothing: busy, and nothing is taken.
  std::optional<TimePoint> admit(TimePoint now, std::uint32_t bytes);
  // Why a piece asked for at `now` was refused, for the asker's log: "busy: ...".
  std::string busy_reason(TimePoint now) const;
  // A piece admitted earlier was sent or given up.
  void finished();
  std::size_t in_progress() const { return in_progress_; }
  const ServeLimits& limits() const { return limits_; }

 private:
  Duration transmit_time(std::uint64_t bytes) const;

  ServeLimits limits_;
  TimePoint drained_at_{};  // the pieces admitted so far have had their time at the rate by here
  std::size_t in_progress_ = 0;
};

}  // namespace loco::proto
