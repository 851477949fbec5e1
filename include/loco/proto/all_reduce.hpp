#pragma once
// The all-reduce of a round's outer updates: every member of the group ends with the mean of the
// members' vectors, bit for bit the same everywhere. Two algorithms share this interface and the
// chunk message (`ring_chunk`, PROTOCOL.md): the ring (ring_allreduce.hpp) and the direct
// exchange (direct_allreduce.hpp). Each writes its cost next to it; in short, for N members, S
// values, c encoded bytes per value, B the slowest upload and L the one-way latency, both send
// 2(N − 1)/N · c·S bytes per member, the ring in 2(N − 1) sequential steps and the direct exchange
// in 2, so on a WAN a small update (c·S/N/B < L) takes ≈ 2(N − 1)·L by ring and ≈ 2·L direct.
//
// Both keep the rule that makes the bits equal (docs/DESIGN.md §1.5): the sum of each segment is
// computed by one member (its owner) in a fixed order, divided by N, encoded once, and the owner
// overwrites its own values with the decoded bytes it sends, so every member decodes the same
// bytes.
//
// What they read, and the memory of a round (S values, N members, c encoded bytes a value):
//   ring    this member's fp32 update, read only, and a result buffer of its own (4S + 4S bytes):
//           it sums fp32 partial sums, so each hop needs the update's values as they are. A retry
//           starts again from the same update; the caller keeps it whole for that.
//   direct  this member's update encoded once for the round (encoded_update.hpp, c·S bytes) and
//           the mean as its owners encoded it (c·S, round_mean.hpp; or decoded into a caller's
//           4S): every sum is computed from encoded contributions (the owner decodes its own like
//           the others'), so the fp32 update is only the encoder's input. A retry sends the same
//           encoded bytes.
// Segments: the ring's are S/N values each; the direct exchange's are whole chunks (units of the
// encoded update: segment_begin below), so a chunk is the same values whatever the group's size.
//
// Call order: start(), then on_message() for each chunk message from a member; after each call
// drain poll_transmit(). done() once every segment holds the mean; failure() with a reason if
// not. A retry is a new collective (the ring's from the same update, the direct exchange's from
// the same encoded update).

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/buffer_pool.hpp"
#include "loco/proto/owner_check.hpp"
#include "loco/proto/round_formation.hpp"
#include "loco/proto/unit_evidence.hpp"

namespace loco::proto {

enum class AllReduceAlgorithm : std::uint8_t { ring, direct };

// "ring" or "direct"; Error(invalid_argument) naming the choices otherwise.
AllReduceAlgorithm parse_all_reduce_algorithm(std::string_view name);
std::string_view name(AllReduceAlgorithm algorithm);

struct AllReduceConfig {
  static constexpr std::size_t kMaxChunkValues = std::size_t{1} << 22;

  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::vector<PeerKey> members;                     // the group, in the tracker's order
  std::size_t self = 0;                             // this member's index
  std::size_t chunk_values = std::size_t{1} << 16;  // per message, at most kMaxChunkValues
  const compress::Codec* codec = nullptr;           // outlives the collective
  std::uint64_t seed = 0;                           // stochastic rounding, if the codec does it
  float median_norm = 0;  // the group's reference norm (round_formation.hpp)
  float norm_limit = 0;   // 0: no norm bound (gossip groups, whose vector is not an update)
  // The direct exchange's owners leave this many smallest and largest contributions out of each
  // coordinate (a trimmed mean); at most (members − 1) / 2. The ring sums partial sums and cannot.
  std::size_t trim = 0;
  // Rounds bounded by time (token_weights.hpp): member m's contribution counts weights[m] times
  // (they sum to N). The direct exchange's owners take the weighted mean of the contributions they
  // keep; the ring's members scale their own as they read it and divide the sum by N. Empty: each
  // counts once.
  std::vector<float> weights{};
  // Where the direct exchange's owner takes the buffers for the others' contributions to a chunk
  // of its segment (chunk_values floats each), reused from chunk to chunk; none: allocated.
  BufferPool<float>* buffers = nullptr;
  // Checked owners (owner_check.hpp, the direct exchange only): each segment is also reduced by
  // its checker, and both sign their result's digest with `signer` for run `run_id`. The direct
  // exchange signs its chunks with `signer` too (unit_evidence.hpp); none: they go unsigned, and
  // a chunk refused shows nothing to the rest of the group.
  bool check_owners = false;
  const secure::KeyPair* signer = nullptr;
  std::string run_id{};
};

struct AllReduceFailure {
  std::string reason;
  std::optional<PeerKey> suspect;
  // Signed statements that show who is at fault (checked owners): for the tracker.
  std::optional<MisconductProof> proof{};
  // A signed chunk out of bounds (unit_evidence.hpp): for the rest of the group.
  std::optional<Evidence> evidence{};
};

// The chunk message's header: (version, round, attempt, phase, step, chunk, signature) then the
// codec's bytes. The direct exchange signs the bytes of its chunks (unit_evidence.hpp); the ring's
// signature is zeros.
struct ChunkHeader {
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::uint8_t phase = 0;  // 0 reduce-scatter, 1 all-gather
  std::uint32_t step = 0;
  std::uint32_t chunk = 0;
  secure::Signature signature{};
};
constexpr std::size_t kChunkHeaderBytes = 1 + 8 + 4 + 1 + 4 + 4 + 64;
std::vector<std::byte> encode_chunk(const ChunkHeader& header, std::span<const std::byte> payload);
// Checks the size limit and the version; the payload is what follows the header (a view of body).
// Error(protocol) for a malformed message.
ChunkHeader decode_chunk(std::span<const std::byte> body, std::span<const std::byte>& payload);

// The first value of segment g (0 ≤ g ≤ N; segment N−1 ends at S) when S `values` are cut among N
// `members` in whole runs of `grain` values: ⌊g·⌈S/grain⌉/N⌋·grain, at most S. The ring's grain is
// 1 (segment g = values [g·S/N, (g+1)·S/N)); the direct exchange's its chunk (direct_chunk_values),
// so that its segments are whole units of the encoded update; their sizes differ by one chunk at
// most (with fewer chunks than members, some members own none).
std::size_t segment_begin(std::size_t values, std::size_t members, std::size_t g,
                          std::size_t grain);

// The direct exchange's chunk, the unit its members' updates are encoded in, for an update of
// `values` values and the configured `chunk_values`: chunk_values, or less for an update of fewer
// than 64 × chunk_values values, so that it is cut into 64 chunks or more (a multiple of 8 values,
// and at least 8). Independent of the group, so an update encoded once serves any attempt of the
// round. With 64 chunks or more, a group of up to 64 gives every member a segment (every owner
// then sees every member's contribution: how the tracker hears from a majority that one member
// sends an oversized update), and segments differ by a chunk, 1/64 of the update, at most.
// Small updates pay for it in messages: 64 chunks where an update under 64 × chunk_values values
// cut evenly would take N.
std::size_t direct_chunk_values(std::size_t values, std::size_t chunk_values);

// What a member of the direct exchange configured by `config` over `values` values checks evidence
// against (unit_evidence.hpp); `config` outlives it.
EvidenceContext evidence_context(const AllReduceConfig& config, std::size_t values);

// Why decoded `values` cannot come from honest members, or nothing: a value that is not finite,
// or a norm above what `contributions` honest updates reach (AllReduce::decode_checked; a
// `norm_limit` of 0 sets no bound).
std::optional<std::string> out_of_bounds(std::span<const float> values, double contributions,
                                         float norm_limit, float median_norm);

// The interface (start, on_message, done, needs_link_to) and what both algorithms share: the
// vector cut into N segments of chunks, the queue of messages out, the failure.
class AllReduce {
 public:
  struct Transmit {
    PeerKey to;
    std::vector<std::byte> body;  // a ring_chunk message
  };

  virtual ~AllReduce() = default;

  virtual void start() = 0;
  virtual void on_message(const PeerKey& from, std::span<const std::byte> body) = 0;
  virtual bool done() const = 0;
  // Whether losing the link to `peer` stops this member's part of the collective: the ring needs
  // both neighbours; the direct exchange only members it still expects chunks from (one that has
  // sent everything, and may be leaving, is not waited on).
  virtual bool needs_link_to(const PeerKey& peer) const = 0;

  std::optional<Transmit> poll_transmit();
  const std::optional<AllReduceFailure>& failure() const { return failure_; }
  // Fails the collective from outside (a member's connection dropped, the tracker aborted).
  void fail(std::string reason, std::optional<PeerKey> suspect);
  // Fails it with signed statements that show who is at fault (checked owners); the messages
  // already queued still go out.
  void fail_proven(std::string reason, const MisconductProof& proof);
  std::uint64_t bytes_sent() const { return bytes_sent_; }

 protected:
  // How the vector is cut into segments (segment_begin): S/N values each (grain 1), or whole
  // chunks (grain config.chunk_values).
  enum class Segments : std::uint8_t { even, whole_chunks };
  // A collective over vectors of `values` floats (where its result goes is the algorithm's).
  AllReduce(AllReduceConfig config, std::size_t values, Segments segments);

  struct Chunk {
    std::size_t begin;  // in values
    std::size_t size;
  };
  std::size_t member_count() const { return config_.members.size(); }
  std::size_t values() const { return values_; }
  // Segment g is values [segment_begin(g), segment_begin(g + 1)), cut into chunks of at most
  // chunk_values from its start.
  Chunk chunk(std::size_t segment, std::size_t k) const;
  std::size_t chunks_in(std::size_t segment) const;
  std::size_t segment_size(std::size_t segment) const;

  // `values` encoded with the codec, seeded by `salt` (nothing, after failing, if they cannot be).
  std::vector<std::byte> encode(std::span<const float> values, std::uint64_t salt);
  void send(const PeerKey& to, std::uint8_t phase, std::size_t step, std::size_t k,
            std::span<const std::byte> encoded, const secure::Signature& signature = {});
  // Decodes a chunk of `size` values into scratch_ and checks what every received chunk must
  // pass: its values are finite, and their norm is within what `contributions` honest updates can
  // reach (each honest update's norm is at most limit · median, screened by the tracker, so a sum
  // of k of them at most k · limit · median, the triangle inequality; with slack for
  // quantization; a norm_limit of 0 disables it). `contributions` counts weighted ones at their
  // weight. False, after failing naming `sender`, if not.
  bool decode_checked(std::span<const std::byte> encoded, std::size_t size, double contributions,
                      const PeerKey& sender);
  // The same into `out` (the chunk's size).
  bool decode_checked(std::span<const std::byte> encoded, std::span<float> out,
                      double contributions, const PeerKey& sender);
  // Adds, to the failure just set, the evidence of a signed chunk that caused it.
  void attach_evidence(Evidence evidence);
  // What `contributions` summed contributions count for at most: as many times the heaviest
  // weight (config_.weights; 1 when unweighted).
  double at_most_weight(std::size_t contributions) const;
  // The round and attempt of a chunk message, checked; its payload.
  ChunkHeader read_chunk(std::span<const std::byte> body,
                         std::span<const std::byte>& payload) const;

  AllReduceConfig config_;
  std::size_t values_;
  // segment_begin(g) for g in [0, members]: computed once, not at every chunk (two divisions each).
  std::vector<std::size_t> bounds_;
  std::vector<float> scratch_;

 private:
  std::optional<AllReduceFailure> failure_;
  std::deque<Transmit> out_;
  std::uint64_t bytes_sent_ = 0;
};

// `update` is this member's vector, read only; `result` (its size) holds the mean once done().
// Both outlive the collective. They may be the same span (the mean then replaces the update); the
// direct exchange encodes the update at once (its own EncodedUpdate), the ring reads it as it goes.
std::unique_ptr<AllReduce> make_all_reduce(AllReduceAlgorithm algorithm, AllReduceConfig config,
                                           std::span<const float> update, std::span<float> result);

}  // namespace loco::proto
