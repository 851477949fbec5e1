#include "loco/proto/custody_pull.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"

namespace loco::proto {

CustodyPull::CustodyPull(CustodyPullConfig config, TimePoint now)
    : config_(std::move(config)),
      fetcher_(FetchConfig{.round = config_.round,
                           .state_hash = config_.state_hash,
                           .donors = {config_.donor},
                           .patience = config_.patience,
                           .reask_after = Duration::zero()},  // the tracker's own retries
               now),
      release_at_(now) {
  collect(now);
}

void CustodyPull::on_message(TimePoint now, const PeerKey& from, MessageType type,
                             std::span<const std::byte> body) {
  if (from != config_.donor || failure() || done()) return;
  if (type == MessageType::state_manifest) {
    // Checked here, before the fetcher sizes its buffer by it; a malformed manifest is left to the
    // fetcher, which drops the donor for it.
    try {
      StateManifest m = decode_manifest(body);
      if (m.round == config_.round && m.state_hash() == config_.state_hash) {
        if (m.total_bytes > config_.max_state_bytes) {
          too_large_ = m.total_bytes;
          return;
        }
        manifest_ = std::move(m);
      }
    } catch (const Error&) {
    }
  }
  fetcher_.on_message(now, from, type, body);
  collect(now);
}

void CustodyPull::on_donor_lost(TimePoint now, const PeerKey& donor) {
  fetcher_.on_donor_lost(now, donor);
  collect(now);
}

void CustodyPull::on_timer(TimePoint now) {
  fetcher_.on_timer(now);
  collect(now);
}

// Moves the fetcher's requests out, the chunk requests as the budget allows.
void CustodyPull::collect(TimePoint now) {
  while (auto t = fetcher_.poll_transmit()) {
    if (t->type == MessageType::chunk_request && config_.bytes_per_s > 0)
      held_.push_back(std::move(*t));
    else
      out_.push_back(std::move(*t));
  }
  while (!held_.empty() && now >= release_at_) {
    out_.push_back(std::move(held_.front()));
    held_.pop_front();
    const std::uint64_t chunk = manifest_ ? manifest_->chunk_bytes : kStateChunkBytes;
    release_at_ = std::max(release_at_, now) +
                  std::chrono::duration_cast<Duration>(std::chrono::duration<double>(
                      static_cast<double>(chunk) / static_cast<double>(config_.bytes_per_s)));
  }
}

std::optional<PeerTransmit> CustodyPull::poll_transmit() {
  if (out_.empty()) return std::nullopt;
  PeerTransmit t = std::move(out_.front());
  out_.pop_front();
  return t;
}

TimePoint CustodyPull::poll_timeout() const {
  if (failure() || done()) return kNever;
  TimePoint next = fetcher_.poll_timeout();
  if (!held_.empty()) next = std::min(next, release_at_);
  return next;
}

std::optional<std::string> CustodyPull::failure() const {
  if (too_large_)
    return fmt::format("the state is {} bytes, above the custody limit of {}", *too_large_,
                       config_.max_state_bytes);
  return fetcher_.failure();
}

StateManifest CustodyPull::manifest() const {
  return manifest_.value_or(StateManifest{});
}

}  // namespace loco::proto
