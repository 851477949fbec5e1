#pragma once
// Direct all-reduce of a round's outer updates (all_reduce.hpp): every member sends each other
// member its part of the vector and gets the mean of its own part back from each. Sans-I/O.
//
// Cost, for N members, S values, a codec that sends c bytes per value:
//   steps           2: one of reduce-scatter, one of all-gather (N − 1 messages each)
//   bytes per peer  2(N − 1)/N · c·S sent, the same received (+ 22 bytes per chunk): the ring's
//   time            ≈ 2(N − 1)/N · c·S / B + 2L, B the slowest upload, L the one-way latency
// where the ring pays 2(N − 1) latencies on a small update: at N = 4 and 50 ms, 100 ms against
// 300 ms. What it costs: each member holds a link to every other (the mesh does), receives the
// N − 1 parts of its segment at once, and keeps them until the last is in ((N − 1)/N · S floats).
// For groups of thousands the ring's N − 1 messages per member are fewer; DiLoCo groups and gossip
// groups are small.
//
// The vector is cut into N segments (segment g = values [g·S/N, (g+1)·S/N)), each into chunks of
// at most `chunk_values`; member g owns segment g. Member i:
//   1. reduce-scatter: sends chunk k of segment g, encoded, to member g, for every g ≠ i; chunk by
//      chunk, the owners in turn (i + 1, i + 2, ...), so every owner gets its first chunks early.
//   2. the owner, once chunk k of its segment is in from all N − 1 others: sums the N decoded
//      contributions (its own values unencoded) in member order, divides by N, encodes once,
//      writes the decoded bytes into its result and sends those bytes to every other member. With
//      `trim` t > 0 it takes each coordinate's trimmed mean instead: its N values in ascending
//      order less the t smallest and t largest, summed in that order, over N − 2t (O(N log N) a
//      coordinate, S log N in all for the owner); a minority of at most t poisoned updates moves no
//      coordinate outside the range of the honest ones. With `weights` (a round bounded by time)
//      it takes the weighted mean Σ w_m·x_m / Σ w_m of the contributions it keeps (all, or those
//      the trim leaves, ties in value broken by member order).
//   3. all-gather: decodes member g's bytes into segment g of its result.
// Checks on every received chunk (check_received: an update, or the mean, as one contribution):
// it comes from a member, for this round and attempt, in order from that member, and decodes. A
// chunk that fails ends the collective with failure() naming its sender.

#include <cstdint>
#include <span>
#include <vector>

#include "loco/proto/all_reduce.hpp"

namespace loco::proto {

class DirectAllReduce final : public AllReduce {
 public:
  DirectAllReduce(AllReduceConfig config, std::span<const float> update, std::span<float> result);

  void start() override;
  void on_message(const PeerKey& from, std::span<const std::byte> body) override;
  bool done() const override {
    return !failure() && owned_chunks_done_ == chunks_in(config_.self) &&
           gathered_ == expected_gathers_;
  }
  bool needs_link_to(const PeerKey& peer) const override;

 private:
  void on_reduce(std::size_t from, std::size_t k, std::span<const std::byte> encoded);
  void on_gather(std::size_t from, std::size_t k, std::span<const std::byte> encoded);
  void finish_owned_chunk(std::size_t k);

  // The others' decoded contributions to each chunk of this member's segment, by chunk then
  // member, kept until the chunk's last one is in (none for this member: its values are its own).
  std::vector<std::vector<std::shared_ptr<std::vector<float>>>> waiting_;
  std::vector<std::size_t> parts_in_;  // per chunk of the own segment: how many others sent it
  std::vector<float> column_;          // one coordinate's contributions, for the trimmed mean
  std::vector<std::size_t> order_;     // ... their members, for the weighted mean
  // Next chunk expected from each member, per phase.
  std::vector<std::size_t> next_reduce_, next_gather_;
  std::size_t owned_chunks_done_ = 0;
  std::size_t gathered_ = 0;
  std::size_t expected_gathers_ = 0;
};

}  // namespace loco::proto
