#pragma once
// The tracker's pull of one custody copy, sans-I/O: a StateFetcher (state_transfer.hpp) with a
// single donor, the state's size checked against the custody limit before anything is allocated,
// and a bandwidth budget that paces the chunk requests. The tracker core runs one at a time and
// tries another donor when one fails (tracker_custody.cpp).
//
// Call order: after each on_*() drain poll_transmit() and look at done() / failure();
// poll_timeout() is the next deadline for on_timer(now). Extra polls are harmless.

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "loco/proto/state_transfer.hpp"

namespace loco::proto {

// A copy pulled, for the tracker's driver to store (TrackerCore::poll_custody()).
struct CustodyCopy {
  StateManifest manifest;
  std::vector<std::byte> state;
};

struct CustodyPullConfig {
  std::uint64_t round = 0;
  Digest state_hash{};  // the committed majority hash of `round`
  PeerKey donor;
  std::uint64_t max_state_bytes = 0;  // a larger state is not pulled
  std::uint64_t bytes_per_s = 0;      // chunk requests paced to this (0: unpaced)
  Duration patience = std::chrono::seconds(20);
};

class CustodyPull {
 public:
  CustodyPull(CustodyPullConfig config, TimePoint now);

  void on_message(TimePoint now, const PeerKey& from, MessageType type,
                  std::span<const std::byte> body);
  void on_donor_lost(TimePoint now, const PeerKey& donor);
  void on_timer(TimePoint now);
  std::optional<PeerTransmit> poll_transmit();
  TimePoint poll_timeout() const;

  const CustodyPullConfig& config() const { return config_; }
  bool done() const { return fetcher_.done(); }
  // Why the pull failed, once it has.
  std::optional<std::string> failure() const;
  // The donor sent bytes that do not match the committed state (a failure that names it).
  bool donor_was_bad() const { return !fetcher_.bad_donors().empty(); }
  // The state is larger than max_state_bytes: pulling again will not help.
  std::optional<std::uint64_t> too_large() const { return too_large_; }
  // The state, once done(): the manifest and its bytes.
  StateManifest manifest() const;
  std::span<const std::byte> state() const { return fetcher_.state(); }

 private:
  void collect(TimePoint now);

  CustodyPullConfig config_;
  StateFetcher fetcher_;
  std::optional<StateManifest> manifest_;
  std::optional<std::uint64_t> too_large_;
  std::deque<PeerTransmit> held_;  // chunk requests waiting for the budget
  std::deque<PeerTransmit> out_;
  TimePoint release_at_{};  // when the next held request may go
};

}  // namespace loco::proto
