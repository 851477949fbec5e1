#pragma once
// A round's mean as the strategy reads it: one interface over two backings, so a strategy has one
// code path whatever collective averaged the round.
//   encoded  the direct exchange's result (direct_allreduce.hpp): chunk k of the mean as its owner
//            encoded and sent it (values [k·U, min((k + 1)·U, S)), U the exchange's chunk), kept
//            as those bytes and decoded chunk by chunk when read. c·S bytes (int8 with blocks of
//            256: 1.02 S) instead of 4S; the values read are exactly those an fp32 result would
//            hold (each chunk decoded from the same bytes by the same codec).
//   fp32     the ring's and gossip's result, a vector of S floats (4S bytes), or a mean a local
//            group hands as a span (train::RoundInput), read in place.
// Reading it is const and may run on many threads at once (a partial chunk is decoded into the
// reading thread's scratch).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "loco/compress/codec.hpp"

namespace loco::proto {

class RoundMean {
 public:
  // The fp32 backing: `values`, shared with whoever else holds them.
  explicit RoundMean(std::shared_ptr<const std::vector<float>> values);
  // The fp32 backing over `values`, which outlive this.
  explicit RoundMean(std::span<const float> values);
  // The encoded backing: `chunks[k]` is a message of `codec` holding values [k·chunk_values, ...)
  // of `values` in all.
  RoundMean(std::vector<std::vector<std::byte>> chunks, std::size_t values,
            std::size_t chunk_values, std::shared_ptr<const compress::Codec> codec);

  std::size_t size() const { return values_; }
  // The bytes it holds: 4S for fp32, the chunks' for encoded.
  std::size_t bytes() const;
  // fn(first, values) for consecutive pieces covering [0, size()) in order: the encoded backing's
  // chunks, each decoded into one scratch buffer (valid during the call only), or slices of the
  // fp32 vector.
  void for_each_chunk(
      const std::function<void(std::size_t first, std::span<const float>)>& fn) const;
  // out = values [first, first + out.size()).
  void decode(std::size_t first, std::span<float> out) const;
  // Every value (a copy, for a reader that needs the whole vector at once).
  std::vector<float> values() const;
  // The fp32 backing's values; none for the encoded one.
  std::optional<std::span<const float>> fp32() const;

 private:
  std::shared_ptr<const std::vector<float>> owned_;  // the fp32 backing's, when shared
  std::span<const float> fp32_;
  std::vector<std::vector<std::byte>> chunks_;
  std::size_t values_ = 0;
  std::size_t chunk_values_ = 0;
  std::shared_ptr<const compress::Codec> codec_;

  std::size_t chunk_size(std::size_t k) const;
};

}  // namespace loco::proto
