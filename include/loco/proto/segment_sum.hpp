#pragma once
// One segment of the direct exchange (direct_allreduce.hpp), as its owner or its checker reduces
// it: the members' decoded contributions, chunk by chunk, and each chunk's mean once the last is
// in. A contribution waits in a pooled chunk-sized buffer only until its chunk is summed, so a
// group of N holds only the chunks some member is behind on. This member's own contribution,
// encoded like the others', is all in at the start: it is read where this member's encoded update
// keeps it for the round (encoded_update.hpp; no copy) and decoded when its chunk is summed. Each
// member's encoded chunks are hashed as they arrive, into the segment's digest its signed
// statement must match (owner_check.hpp: SegmentDigest); this member's own come with theirs.
//
// The mean of a chunk, from its N contributions x_m (config.trim t, config.weights w):
//   plain     Σ x_m / N, summed in member order
//   trimmed   each coordinate's values in ascending order less the t smallest and t largest,
//             summed in that order, over N − 2t (O(N log N) a coordinate): a minority of at most
//             t poisoned updates moves no coordinate outside the range of the honest ones
//   weighted  Σ w_m·x_m / Σ w_m over the contributions kept (all, or those the trim leaves, ties
//             in value broken by member order)
// The same inputs give the same bits on every machine: plain float operations in a fixed order.

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/buffer_pool.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/owner_check.hpp"

namespace loco::proto {

class SegmentSum {
 public:
  // `chunks` chunks from `members` members; `buffers` (may be null) lends the chunk buffers;
  // `codec` decodes what add_encoded() keeps.
  SegmentSum(std::size_t members, std::size_t chunks, std::size_t trim, std::vector<float> weights,
             BufferPool<float>* buffers, const compress::Codec* codec);

  std::size_t chunks() const { return parts_in_.size(); }
  // The chunk member m sends next (they come in order).
  std::size_t next_from(std::size_t m) const { return next_[m]; }
  // A buffer of `size` floats for a contribution's decoded values (from the pool, if lent one).
  std::shared_ptr<std::vector<float>> buffer(std::size_t size);
  // Member m's chunk k (the next from m): its encoded bytes, hashed, and its decoded values (in a
  // buffer() the caller decoded them into), kept. Returns whether chunk k now holds `expected`
  // contributions.
  bool add(std::size_t m, std::span<const std::byte> encoded,
           std::shared_ptr<std::vector<float>> values, std::size_t expected);
  // Member m's chunk k, encoded, read from `encoded` (which outlives this) when the chunk is
  // summed (one member only: this one).
  bool add_encoded(std::size_t m, std::span<const std::byte> encoded, const Digest& digest,
                   std::size_t expected);
  // The mean of chunk k into `out` (its size). Lets the chunk's buffers go.
  void mean(std::size_t k, std::span<float> out);
  // The digest of everything member m sent (once its last chunk is in).
  Digest digest_of(std::size_t m) const;

 private:
  std::size_t members_;
  std::size_t trim_;
  std::vector<float> weights_;
  BufferPool<float>* buffers_;
  std::vector<std::vector<std::shared_ptr<std::vector<float>>>> waiting_;  // by chunk, member
  std::vector<std::size_t> parts_in_;                                      // per chunk
  std::vector<std::size_t> next_;                                          // per member
  std::vector<SegmentDigest> hashes_;                                      // per member
  const compress::Codec* codec_;
  std::size_t encoded_member_ = 0;
  std::vector<std::span<const std::byte>> encoded_;  // per chunk: encoded_member_'s, if added
  std::vector<float> decoded_;                       // ... decoded for the sum
  std::vector<float> column_;       // one coordinate's contributions, for the trimmed mean
  std::vector<std::size_t> order_;  // ... their members, for the weighted mean
  std::vector<float> sum_;
};

}  // namespace loco::proto
