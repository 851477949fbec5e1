#pragma once
// Fetching the run's state from several donors at once, sans-I/O (docs/DESIGN.md §2.4).
//
// A newcomer (or a peer out of sync) knows from the tracker the round and the state hash the
// majority holds, and a few donors. StateFetcher asks each donor for its manifest, keeps the
// donors whose manifest hashes to the expected state hash (state_manifest.hpp), then asks them for
// chunks, a few at a time each, checks every chunk against the manifest as it arrives, and puts
// the state together. A donor that sends a bad manifest or chunk is dropped and reported; one that
// disconnects or stops answering is dropped and its chunks go to the others. The buffer is
// allocated only once a manifest has matched the tracker's hash, so its size is the majority's.
// A donor that refuses before its manifest (most often: it has not yet applied the commit that
// made the fetch) is asked once more, reask_after later. When nothing is left to ask for, a donor
// with nothing in flight is also asked for a chunk another donor has held for duplicate_after,
// whichever copy comes first counts and the other is ignored: a donor on a slow link must not
// hold the fetch up for its patience (found in CI: 20 s behind a 120 kbit/s donor).
//
// StateServer is the donor's side: it answers from the state it holds (the last committed round),
// and refuses requests for any other round.
//
// Messages (route peer_to_peer): state_request {round, hash} -> state_manifest {manifest} or
// state_refusal {round, reason}; chunk_request {round, index} -> state_chunk {round, index, bytes}.
//
// Call order (both): after each on_*() drain poll_transmit() (and, for the fetcher, check
// done()/failure()); the fetcher's poll_timeout() is the next deadline for on_timer(now).

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/proto/round_formation.hpp"
#include "loco/proto/state_manifest.hpp"

namespace loco::proto {

struct PeerTransmit {
  PeerKey to;
  MessageType type{};
  std::vector<std::byte> body;
};

struct FetchConfig {
  std::uint64_t round = 0;
  Digest state_hash{};
  std::vector<PeerKey> donors;
  std::size_t window = 4;                                 // chunks in flight per donor
  Duration patience = std::chrono::seconds(20);           // a donor silent this long is dropped
  Duration reask_after = std::chrono::milliseconds(500);  // zero: a refusal drops the donor
  Duration duplicate_after = std::chrono::seconds(3);
};

class StateFetcher {
 public:
  StateFetcher(FetchConfig config, TimePoint now);

  void on_message(TimePoint now, const PeerKey& from, MessageType type,
                  std::span<const std::byte> body);
  void on_donor_lost(TimePoint now, const PeerKey& donor);
  void on_timer(TimePoint now);
  std::optional<PeerTransmit> poll_transmit();
  TimePoint poll_timeout() const;

  bool done() const { return manifest_ && received_ == manifest_->chunk_count(); }
  const std::optional<std::string>& failure() const { return failure_; }
  // Donors that sent something wrong, with what: to report to the tracker.
  const std::map<PeerKey, std::string>& bad_donors() const { return bad_; }
  // The state, once done().
  std::span<const std::byte> state() const { return buffer_; }
  std::uint64_t bytes_received() const { return bytes_received_; }
  // The donors whose chunks went into the state (each checked against the manifest), by key.
  const std::set<PeerKey>& served_by() const { return served_by_; }

 private:
  struct Donor {
    bool ready = false;  // its manifest matched
    std::set<std::uint64_t> in_flight;
    std::set<std::uint64_t> abandoned;  // asked for, then received from another donor first
    TimePoint last_heard{};
    bool reasked = false;
    TimePoint reask_at = kNever;
  };

  void handle(TimePoint now, const PeerKey& from, MessageType type,
              std::span<const std::byte> body);
  void accept_manifest(const PeerKey& from, StateManifest manifest);
  void accept_chunk(TimePoint now, const PeerKey& from, std::uint64_t index,
                    std::span<const std::byte> bytes);
  void refused(TimePoint now, const PeerKey& from, const std::string& reason);
  void drop(const PeerKey& donor, const std::string& why, bool bad);
  void request_more(TimePoint now);
  void ask_for_chunk(const PeerKey& key, Donor& donor, std::uint64_t index);
  void duplicate_held_chunks(TimePoint now);
  std::size_t holders(std::uint64_t index) const;  // the donors it is in flight at
  bool idle(const Donor& d) const;
  bool a_donor_is_idle() const;

  FetchConfig config_;
  std::map<PeerKey, Donor> donors_;
  std::optional<StateManifest> manifest_;
  std::vector<std::byte> buffer_;
  std::vector<bool> have_;
  std::deque<std::uint64_t> wanted_;             // chunks not received nor in flight
  std::map<std::uint64_t, TimePoint> asked_at_;  // chunks in flight: when first asked for
  std::uint64_t received_ = 0;
  std::uint64_t bytes_received_ = 0;
  std::map<PeerKey, std::string> bad_;
  std::set<PeerKey> served_by_;
  std::optional<std::string> failure_;
  std::deque<PeerTransmit> out_;
};

class StateServer {
 public:
  // What one requester may be sent of the state served now: twice the state (manifest and chunks).
  // A request is ~20 bytes and a chunk up to a MiB, so without a bound one member could make this
  // peer send without end; an honest fetcher takes the state once, twice if its fetch starts over.
  // Past it, requests are refused until the next state is served, or until forget(requester).
  static constexpr std::uint64_t kStatesPerRequester = 2;

  // Serves the state of `manifest.round`: `state` must stay valid and unchanged until the next
  // serve() (or clear()).
  void serve(StateManifest manifest, StateBytes state);
  void clear();
  // A new share for `requester` (the tracker's custody copy, which may stay the same for the rest
  // of a run: a peer that connects again may fetch it again).
  void forget(const PeerKey& requester) { sent_to_.erase(requester); }
  // Requests from `from`; malformed requests throw Error(format) (the driver drops that peer).
  void on_message(const PeerKey& from, MessageType type, std::span<const std::byte> body);
  std::optional<PeerTransmit> poll_transmit();
  std::uint64_t bytes_served() const { return bytes_served_; }

 private:
  // Counts `bytes` more sent to `to`; false (nothing counted) if that would pass its share.
  bool within_share(const PeerKey& to, std::uint64_t bytes);

  std::optional<StateManifest> manifest_;
  StateBytes state_;
  std::deque<PeerTransmit> out_;
  std::uint64_t bytes_served_ = 0;
  std::uint64_t share_ = 0;                   // kStatesPerRequester × (manifest + state)
  std::map<PeerKey, std::uint64_t> sent_to_;  // of the state served now, by requester
};

// The messages, for the driver's size limits and tests.
std::vector<std::byte> encode_state_request(std::uint64_t round, const Digest& hash);
std::vector<std::byte> encode_manifest(const StateManifest& manifest);
StateManifest decode_manifest(std::span<const std::byte> body);
std::vector<std::byte> encode_chunk_request(std::uint64_t round, std::uint64_t index);

}  // namespace loco::proto
