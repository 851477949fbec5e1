#pragma once
// Ring all-reduce of a round's outer updates (all_reduce.hpp): sans-I/O, chunk messages in from the
// ring predecessor, chunk messages out to the successor; no socket, no clock.
//
// Cost, for N members, S values (4S bytes as fp32), a codec that sends c bytes per value:
//   steps           2(N − 1): N − 1 of reduce-scatter, N − 1 of all-gather
//   bytes per peer  2(N − 1)/N · c·S sent, the same received (+ 32 bytes per chunk)
//   time            ≈ 2(N − 1)/N · c·S / B + L when a segment takes longer than L to send, else
//                   ≈ 2(N − 1) · (L + c·S/N / B); B the slowest upload, L the one-way latency
// Chunks pipeline: a member forwards chunk k of step s + 1 as soon as chunk k of step s arrived,
// so while a segment's chunks take longer to send than L the upload never idles and the step
// latencies overlap the transfer (bench/run.sh allreduce, a 10M-value update at 100 Mbit/s and
// 50 ms: 0.82 of 2(N − 1)/N · c·S / B + 2(N − 1) · L, docs/EXPERIMENTS.md §1). But each chunk
// crosses 2(N − 1) links in turn, so a small update pays 2(N − 1) latencies: the case of the
// direct exchange (direct_allreduce.hpp), which pays 2.
//
// The vector is cut into N segments (segment g = values [g·S/N, (g+1)·S/N)), each into chunks of
// at most `chunk_values`. Member i (ring order; i+1 is its successor), which with `weights` (a
// round bounded by time) scales its own values by weights[i] as it reads them (they sum to N, so
// the mean below is the weighted mean; a partial sum of k is then checked against k × the heaviest
// weight):
//   1. reduce-scatter, steps s = 0 .. N−2: send the partial sum of segment (i − s) mod N, chunk by
//      chunk, each encoded with the codec (step 0: its own update). On receiving chunk k of step
//      s (segment (i − 1 − s) mod N) from i − 1: check it, add it to its own update of that chunk
//      (own + received, always in this order) into its result, and send the sum on as step s + 1.
//   2. the owner: after step N−2, segment (i + 1) mod N of its result holds all N contributions.
//      Member i divides it by N, encodes it once, and overwrites it with the decoded bytes: the
//      only quantization of the mean, so every member decodes the very same bytes.
//   3. all-gather, steps s = 0 .. N−2: the owner sends those bytes; every other member decodes
//      each chunk into its result and forwards the same bytes unchanged, until N−2.
// Partial sums are summed in the ring's fixed order and re-quantized at each reduce-scatter hop
// (docs/DESIGN.md §1.5); with N = 1 the update is the mean and nothing is sent.
//
// Checks on every received chunk (the sender is the predecessor): it belongs to this round and
// attempt, comes in order, decodes, and passes check_received(): a partial sum of k updates, the
// mean as one. A chunk that fails ends the collective with failure() naming the predecessor.

#include <cstdint>
#include <span>
#include <vector>

#include "loco/proto/all_reduce.hpp"

namespace loco::proto {

class RingAllReduce final : public AllReduce {
 public:
  // `update` (this member's vector) and `result` outlive the collective; they may be the same span.
  RingAllReduce(AllReduceConfig config, std::span<const float> update, std::span<float> result);

  void start() override;
  void on_message(const PeerKey& from, std::span<const std::byte> body) override;
  bool done() const override { return gathered_ == expected_gathers_ && owner_done_ && !failure(); }
  bool needs_link_to(const PeerKey& peer) const override {
    return peer == predecessor() || peer == successor();
  }

  const PeerKey& predecessor() const;
  const PeerKey& successor() const;

 private:
  enum class Phase : std::uint8_t { reduce_scatter = 0, all_gather = 1 };

  std::size_t segment_of(std::size_t member, std::size_t step) const;  // (member − step) mod N
  void send(Phase phase, std::size_t step, std::size_t k, std::span<const std::byte> encoded);
  void on_reduce(std::size_t step, std::size_t k, std::span<const std::byte> encoded);
  void on_gather(std::size_t step, std::size_t k, std::span<const std::byte> encoded);
  void finish_owned_chunk(std::size_t k);
  std::span<const float> own_values(const Chunk& c);

  std::span<const float> update_;  // this member's, read only: each hop adds it in fp32
  std::span<float> result_;
  std::vector<float> scaled_;  // own_values' copy, in a weighted round
  // Next chunk expected from the predecessor, per phase and step.
  std::vector<std::size_t> next_reduce_, next_gather_;
  std::size_t owned_chunks_done_ = 0;
  bool owner_done_ = false;
  std::size_t gathered_ = 0;
  std::size_t expected_gathers_ = 0;
};

}  // namespace loco::proto
