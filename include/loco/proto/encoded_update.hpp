#pragma once
// A member's whole update for a round, encoded once (direct_allreduce.hpp): what the direct
// exchange sends of it and what its owners sum, its own owner included. Sans-I/O.
//
// The update of S values is cut into units of U values at fixed places (unit u = values
// [u·U, min((u + 1)·U, S)), U the collective's chunk), and each unit is encoded on its own with
// the codec, its stochastic rounding seeded by counter_u64(seed, the member's key, u·U). So the
// bytes of a unit depend on the values, the seed and the member only: not on the group (the
// direct exchange's segments are whole units, all_reduce.hpp), not on the attempt, not on the
// thread count. A retry of the round, whatever its group, sends the same bytes again.
//
// Why sending the same bytes again is sound: stochastic rounding makes each encoding an unbiased
// draw of the update, E[decode(encode(Δ))] = Δ. The attempts of one round are alternatives, of
// which at most one commits; each commits one draw of each member's update, as before, only the
// draw no longer changes with the attempt number. Rounds draw afresh (the seed is the round's).
// A receiver cannot tell, and needs not: it checks and sums whatever bytes arrive.
//
// Cost, for S values and a codec of c bytes a value: the encode of S values once a round (on
// `threads` threads: units are independent, so the bytes are the same on any count) and the hash
// of each unit as it is encoded (its digest: what sign() signs, and what the checked owners'
// statements are built from, owner_check.hpp, so no byte is hashed twice), one signature a unit
// (sign()), and c·S bytes kept until the round ends (int8
// with blocks of 256: 1.02 S bytes). It is the only copy of this member's contribution the round
// holds: the fp32 update is read once, here, and then let go
// (proto/peer_core.hpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/round_formation.hpp"
#include "loco/secure/identity.hpp"

namespace loco::proto {

class EncodedUpdate {
 public:
  // Updates of fewer values are encoded on the calling thread alone.
  static constexpr std::size_t kParallelValues = std::size_t{1} << 20;

  // `values` encoded with `codec` in units of `unit_values` (> 0) for `member`, on `threads`
  // threads (0: OpenMP's default team), or on the calling thread for an update under
  // kParallelValues values. Values that cannot be encoded (NaN or infinite) leave failure()
  // saying so, and no units.
  EncodedUpdate(const compress::Codec& codec, std::span<const float> values,
                std::size_t unit_values, std::uint64_t seed, const PeerKey& member,
                int threads = 0);

  std::size_t values() const { return values_; }
  std::size_t unit_values() const { return unit_values_; }
  std::size_t units() const { return units_.size(); }
  // Unit u's encoded bytes (a self-describing codec message).
  std::span<const std::byte> unit(std::size_t u) const { return units_[u]; }
  // All units' bytes together.
  std::size_t bytes() const;
  // Why the values could not be encoded, naming the first unit that failed.
  const std::optional<std::string>& failure() const { return failure_; }
  // Signs every unit (unit_evidence.hpp: StatementKind::update_unit of `round`, attempt 0) with
  // `key`, on `threads` threads as the constructor encodes; once, before the first send.
  void sign(const secure::KeyPair& key, std::string_view run_id, std::uint64_t round,
            int threads = 0);
  // Unit u's signature; zeros before sign().
  const secure::Signature& signature(std::size_t u) const;
  // BLAKE2b of unit u's bytes.
  const Digest& digest(std::size_t u) const { return digests_[u]; }
  // The values the group receives from this member: every unit decoded (a copy, for checks).
  std::vector<float> decode(const compress::Codec& codec) const;

  // The stochastic-rounding seed of the unit that starts at value `first` (the class comment).
  static std::uint64_t unit_seed(std::uint64_t seed, const PeerKey& member, std::size_t first);

 private:
  std::size_t values_;
  std::size_t unit_values_;
  std::vector<std::vector<std::byte>> units_;
  std::vector<Digest> digests_;                // one a unit
  std::vector<secure::Signature> signatures_;  // sign()'s, one a unit
  std::optional<std::string> failure_;
};

}  // namespace loco::proto
