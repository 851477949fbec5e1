#pragma once
// A member of the direct exchange with checked owners (proto/owner_check.hpp) that signs a wrong
// result, as a member with its own key would. Its update is honest; what it lies about is a
// segment's mean:
//   Lie::mean   as an owner (Behaviour::wrong_mean): every chunk of its segment's mean that it
//               sends is multiplied by `factor` (−1: negated, which no norm check sees; the same
//               bytes to every member), and the result statement it signs covers the bytes it
//               sent, so that only its checker's statement can give it away;
//   Lie::check  as a checker (Behaviour::disputer): it sends the honest mean of its own segment,
//               but the result statement it signs for the segment it checks is over a digest no
//               honest checker computes, so the owner it checks is disputed every attempt.
// Two such members, one lying as owner where an honest member checks and one as the checker of
// that honest member's segment, give the honest member two dispute partners in one attempt: the
// attack a dispute rule that counts partners must survive (docs/SECURITY.md, "Liveness").

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/hash.hpp"
#include "loco/secure/identity.hpp"

namespace loco::sim {

class LyingMember {
 public:
  enum class Lie : std::uint8_t { mean, check };

  LyingMember(const secure::KeyPair& key, std::string run_id, const std::string& codec, Lie lie,
              float factor = -1.0f);

  // A collective begins: `members` in the group, this member at `self`, a vector of `values`
  // cut into the direct exchange's chunks for `chunk_values` (proto::direct_chunk_values).
  void begin(std::size_t members, std::size_t self, std::size_t values, std::size_t chunk_values);
  // A ring_chunk message this member sends: what it sends instead.
  std::vector<std::byte> rewrite(std::vector<std::byte> body);

 private:
  std::size_t own_chunk_size(std::size_t k) const;

  const secure::KeyPair& key_;
  std::string run_id_;
  std::unique_ptr<compress::Codec> codec_;
  Lie lie_;
  float factor_;
  std::size_t members_ = 0, self_ = 0, values_ = 0, chunk_values_ = 1;
  std::map<std::uint32_t, std::vector<std::byte>> sent_;  // the mean's chunks, as rewritten
  Blake2b sent_hash_;
  std::optional<Digest> sent_digest_;
};

}  // namespace loco::sim
