#include "loco/link/shaper.hpp"

#include <algorithm>
#include <deque>

#include "loco/core/assert.hpp"
#include "loco/core/rng.hpp"

namespace loco::link {
namespace {

constexpr std::uint64_t kMinBurstBytes = 512 * 1024;
constexpr std::uint64_t kBurstMicroseconds = 5'000;

// One connection's view of the link: the shared buckets plus this connection's latency, jitter,
// window, byte count and release order.
class ShapedPacer final : public LinkPacer {
 public:
  ShapedPacer(std::shared_ptr<LinkShaper> link, std::uint64_t seed)
      : link_(std::move(link)), settings_(link_->settings()), rng_(seed) {
    const LinkFaults& f = settings_.faults;
    if (f.drop_at) drop_at_ = link_->start() + *f.drop_at;
    if (f.stall_at) stall_at_ = link_->start() + *f.stall_at;
  }

  SendDecision on_send(TimePoint now, std::size_t bytes) override {
    advance(now);
    if (dropped_) return {now, true};
    if (const auto& limit = settings_.faults.drop_after_bytes;
        limit && sent_bytes_ + bytes > *limit) {
      return drop(now);
    }
    if (now >= drop_at_) return drop(now);
    if (now >= stall_at_) return stall();

    const TimePoint enters = settings_.stream_window ? window_opens(now, bytes) : now;
    const bool ahead = goes_ahead(enters, bytes);
    const TimePoint leaves = ahead ? link_->grant_upload_ahead(now, enters, bytes)
                                   : link_->grant_upload(now, enters, bytes);
    last_leaves_ = std::max(last_leaves_, leaves);
    if (!ahead) last_queued_leaves_ = std::max(last_queued_leaves_, leaves);
    const TimePoint release =
        std::max(last_release_, leaves + settings_.latency + draw_jitter() + draw_loss_delay());
    if (release >= drop_at_) return drop(drop_at_);
    if (release >= stall_at_) return stall();
    last_release_ = release;
    sent_bytes_ += bytes;
    if (settings_.stream_window) {
      // The acknowledgement comes back over the same latency, without jitter.
      unacked_.push_back({release + settings_.latency, bytes});
      unacked_bytes_ += bytes;
    }
    return {release, false};
  }

  TimePoint on_receive(TimePoint now, std::size_t bytes) override {
    advance(now);
    if (now >= stall_at_) return kNever;
    const TimePoint next_read = link_->grant_download(now, bytes);
    return next_read >= stall_at_ ? kNever : next_read;
  }

 private:
  void advance(TimePoint now) {
    LOCO_ASSERT(now >= last_now_, "LinkPacer called with a time earlier than the last call");
    last_now_ = now;
  }

  // When `bytes` more fit in the window: not before `now` or the previous chunk (TCP sends in
  // order), and once the bytes still unacknowledged plus these are at most the window. Acks
  // come back in release order, so they are retired from the front; a chunk larger than the
  // window waits for all of them and then goes alone. Acks retired here are due by the time
  // returned, which later chunks cannot precede, so they never need to be counted again.
  TimePoint window_opens(TimePoint now, std::uint64_t bytes) {
    const std::uint64_t window = *settings_.stream_window;
    window_open_ = std::max(window_open_, now);
    while (!unacked_.empty() &&
           (unacked_.front().acked <= window_open_ || unacked_bytes_ + bytes > window)) {
      window_open_ = std::max(window_open_, unacked_.front().acked);
      unacked_bytes_ -= unacked_.front().bytes;
      unacked_.pop_front();
    }
    return window_open_;
  }

  // fq_codel's new flow (shaper.hpp): a connection none of whose bytes are in the bucket when a
  // chunk enters starts a new quantum, and its chunks go ahead of the queued bytes while they
  // fit in it and none of its own bytes wait in the queue.
  bool goes_ahead(TimePoint enters, std::uint64_t bytes) {
    if (last_leaves_ <= enters) ahead_bytes_ = 0;
    if (last_queued_leaves_ > enters || ahead_bytes_ + bytes > LinkShaper::kNewFlowQuantumBytes)
      return false;
    ahead_bytes_ += bytes;
    return true;
  }

  SendDecision drop(TimePoint when) {
    dropped_ = true;
    return {when, true};
  }

  SendDecision stall() {
    last_release_ = kNever;  // nothing after the stall may leave either
    return {kNever, false};
  }

  // The retransmission delay of a chunk lost `k` times in a row (probability loss^k): the
  // timeouts 1, 2, 4, ... times retransmit_timeout(), summed. Nothing is drawn without loss, so
  // the jitter of a lossless link is the same sequence as before loss existed.
  Duration draw_loss_delay() {
    Duration delay{0};
    Duration timeout = retransmit_timeout(settings_);
    while (settings_.loss > 0 && rng_.uniform() < settings_.loss) {
      delay += timeout;
      timeout *= 2;
    }
    return delay;
  }

  // Uniform in [-jitter, +jitter] nanoseconds.
  Duration draw_jitter() {
    const auto j = static_cast<std::uint64_t>(settings_.jitter.count());
    if (j == 0) return Duration{0};
    return Duration(static_cast<Duration::rep>(rng_.below(2 * j + 1)) - settings_.jitter.count());
  }

  std::shared_ptr<LinkShaper> link_;
  const LinkSettings& settings_;  // owned by link_
  Rng rng_;
  TimePoint drop_at_ = kNever;
  TimePoint stall_at_ = kNever;
  TimePoint last_now_ = TimePoint::min();
  TimePoint last_release_ = TimePoint::min();
  // When this connection's bytes have left the upload bucket: all of them, and those that
  // waited in its queue; and the bytes that went ahead since it was last empty.
  TimePoint last_leaves_ = TimePoint::min();
  TimePoint last_queued_leaves_ = TimePoint::min();
  std::uint64_t ahead_bytes_ = 0;
  std::uint64_t sent_bytes_ = 0;
  bool dropped_ = false;

  struct Unacked {
    TimePoint acked;  // release + latency
    std::uint64_t bytes;
  };
  std::deque<Unacked> unacked_;  // in release order; only with a stream window
  std::uint64_t unacked_bytes_ = 0;
  TimePoint window_open_ = TimePoint::min();  // when the previous chunk entered the window
};

}  // namespace

std::shared_ptr<LinkShaper> LinkShaper::create(const LinkSettings& settings, TimePoint start) {
  validate(settings);
  return std::shared_ptr<LinkShaper>(new LinkShaper(settings, start));
}

LinkShaper::LinkShaper(const LinkSettings& settings, TimePoint start)
    : settings_(settings),
      start_(start),
      upload_(settings.upload, burst_bytes(settings.upload), start),
      new_flow_lane_(settings.upload, 0, start),
      download_(settings.download, burst_bytes(settings.download), start) {}

std::uint64_t LinkShaper::burst_bytes(BitRate rate) {
  const std::uint64_t at_rate = rate / 8 * kBurstMicroseconds / 1'000'000;
  return std::max(kMinBurstBytes, at_rate);
}

std::unique_ptr<LinkPacer> LinkShaper::make_pacer(std::uint64_t seed) {
  return std::make_unique<ShapedPacer>(shared_from_this(), seed);
}

TimePoint LinkShaper::grant_upload(TimePoint now, TimePoint at, std::uint64_t bytes) {
  const std::lock_guard lock(mutex_);
  return upload_.grant(now, at, bytes);
}

TimePoint LinkShaper::grant_upload_ahead(TimePoint now, TimePoint at, std::uint64_t bytes) {
  const std::lock_guard lock(mutex_);
  const TimePoint queued = upload_.grant(now, at, bytes);
  return std::min(queued, new_flow_lane_.grant(now, at, bytes));
}

TimePoint LinkShaper::grant_download(TimePoint now, std::uint64_t bytes) {
  const std::lock_guard lock(mutex_);
  return download_.grant(now, bytes);
}

}  // namespace loco::link
