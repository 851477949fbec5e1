#pragma once
// All-gather of one variable-size message per member (DeMo's DCT components, docs/DESIGN.md §1.4):
// every member ends with every member's message, in member order, the same bytes everywhere.
// Sans-I/O: messages in from the other members, messages out to them; no socket, no clock.
//
// Cost, for N members and S bytes per member's message (S_i when they differ, S = their mean):
//   steps           1: each member sends its own message to each of the N − 1 others at once
//   bytes per peer  (N − 1)·S_self sent, Σ_{j≠self} S_j received (+ 21 bytes of header each)
//   time            ≈ (N − 1)·S / B + L, B the member's upload, L the one-way latency
// A ring would move the same (N − 1)·S per member in N − 1 steps, paying N − 1 latencies; DeMo's
// messages are small (kilobytes per step), so latency dominates and the direct exchange wins.
// Unlike the ring all-reduce nothing is summed or re-encoded on the way: each message arrives as
// its sender wrote it, and every member reduces the same bytes in the same order.
//
// Members are indexed in the group's order (the tracker's group list). Member i:
//   1. start(): queues its own message for every other member, and keeps it as part i (a
//      message above max_part_bytes fails the collective instead, with no suspect).
//   2. on_message(from, body): checks the message (below) and keeps it as part j of its sender.
//   3. done() once all N parts are in; parts() lists them in member order (any may be empty).
// Checks on every received message: it is an all-gather part of this round and attempt, from the
// member its index names, the first from that member, and its declared size is within
// max_part_bytes and equal to what follows. One that fails ends the collective with failed()
// naming the sender as the suspect.
//
// Deadline: handle_timeout(now) at or after config.deadline fails the collective naming the
// members whose part has not arrived (the first as the suspect). A member leaves the set only
// through the group: the driver reports the failure, the tracker aborts the attempt, and every
// survivor starts attempt + 1 with the same shorter member list. So the set of parts a member
// reduces is the group's, never one member's view of who was late; and done() here is only
// local: the round counts once the group commits it (the members' tentative hashes agree).
//
// Call order: start(), then on_message() for each message and handle_timeout() when
// poll_timeout() has passed; after each call drain poll_transmit(). Extra polls are harmless.
//
// Message all_gather_part: version u8 | round u64 | attempt u32 | member index u32
//                          | size u32 | the part's bytes

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/proto/round_formation.hpp"

namespace loco::proto {

struct AllGatherConfig {
  static constexpr std::size_t kHeaderBytes = 21;

  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::vector<PeerKey> members;    // the group's order
  std::size_t self = 0;            // this member's index
  std::size_t max_part_bytes = 0;  // at most the message type's limit minus the header
  TimePoint deadline = kNever;     // parts missing at this time fail the attempt
};

struct AllGatherFailure {
  std::string reason;
  std::optional<PeerKey> suspect;
  std::vector<std::size_t> missing;  // members whose part had not arrived (after a deadline)
};

class AllGather {
 public:
  // `own` is this member's message (copied).
  AllGather(AllGatherConfig config, std::span<const std::byte> own);

  void start();
  void on_message(const PeerKey& from, std::span<const std::byte> body);
  void handle_timeout(TimePoint now);
  TimePoint poll_timeout() const { return finished() ? kNever : config_.deadline; }
  struct Transmit {
    PeerKey to;
    std::vector<std::byte> body;  // an all_gather_part message
  };
  std::optional<Transmit> poll_transmit();

  bool done() const { return received_ == config_.members.size() && !failure_; }
  const std::optional<AllGatherFailure>& failure() const { return failure_; }
  // Fails the collective from outside (a connection dropped, the tracker aborted).
  void fail(std::string reason, std::optional<PeerKey> suspect);
  // Is `peer` a member whose part has not arrived (losing it stops the collective)?
  bool needs_link_to(const PeerKey& peer) const;
  // Every member's part, in member order (complete once done()).
  const std::vector<std::vector<std::byte>>& parts() const { return parts_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  bool finished() const { return done() || failure_.has_value(); }
  void receive(const PeerKey& from, std::span<const std::byte> body);

  AllGatherConfig config_;
  std::vector<std::vector<std::byte>> parts_;
  std::vector<bool> have_;
  std::size_t received_ = 0;
  std::optional<AllGatherFailure> failure_;
  std::deque<Transmit> out_;
  std::uint64_t bytes_sent_ = 0;
};

// The limit on one part: the message type's size limit minus the header.
std::size_t max_all_gather_part_bytes();

// The (round, attempt) an all_gather_part message belongs to, read before the collective exists
// (a part may arrive before this member hears of its group). Error(protocol) when too short or of
// another version.
std::pair<std::uint64_t, std::uint32_t> all_gather_part_id(std::span<const std::byte> body);

}  // namespace loco::proto
